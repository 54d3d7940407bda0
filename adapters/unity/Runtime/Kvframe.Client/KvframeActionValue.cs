using System;
using System.Text;

namespace Kvframe.Client
{
    /// <summary>
    /// One value of a result's parsed action (kvf_value), read in place from the native
    /// result event, which it keeps alive:
    ///
    ///   long chips = result.Action.Get("bet.amount").AsInt();
    ///   string target = result.Action.Get("targets[0].id").AsString();
    ///
    /// Paths join object keys with '.' and index arrays with [i]. A missing key or index
    /// throws KvframeException with KvframeStatus.NotFound (TryGet returns false instead),
    /// the wrong type TypeMismatch. Objects iterate in key order (Count, KeyAt, At).
    /// </summary>
    public sealed class KvframeActionValue
    {
        private readonly EventHandle owner;
        private NativeMethods.Value value; // passed by ref to the native side, never changed

        internal KvframeActionValue(EventHandle owner, NativeMethods.Value value)
        {
            this.owner = owner;
            this.value = value;
        }

        public KvframeValueType Type
        {
            get
            {
                KvframeValueType type = NativeMethods.kvf_value_type_of(ref value);
                GC.KeepAlive(owner);
                return type;
            }
        }

        /// <summary>Elements of an array, members of an object; 0 for anything else.</summary>
        public int Count
        {
            get
            {
                ulong count = NativeMethods.kvf_value_size(ref value).ToUInt64();
                GC.KeepAlive(owner);
                return checked((int)count);
            }
        }

        /// <summary>The value at `path` below this one ("amount", "target.id", "cards[1]").</summary>
        public KvframeActionValue Get(string path)
        {
            NativeMethods.Value found;
            Check(NativeMethods.kvf_value_get(ref value, Utf8Path(path), out found));
            return new KvframeActionValue(owner, found);
        }

        /// <summary>Get without the exception: false when the path is not there or leads
        /// through a value of another type.</summary>
        public bool TryGet(string path, out KvframeActionValue found)
        {
            NativeMethods.Value raw;
            KvframeStatus status = NativeMethods.kvf_value_get(ref value, Utf8Path(path), out raw);
            found = null;
            if (status == KvframeStatus.NotFound || status == KvframeStatus.TypeMismatch) return false;
            Check(status); // a malformed path still throws
            found = new KvframeActionValue(owner, raw);
            return true;
        }

        /// <summary>An array's element or an object's member value (key order) by position.</summary>
        public KvframeActionValue At(int index)
        {
            NativeMethods.Value element;
            Check(NativeMethods.kvf_value_at(ref value, Index(index), out element));
            return new KvframeActionValue(owner, element);
        }

        /// <summary>An object's key by position (the key of At(index)).</summary>
        public string KeyAt(int index)
        {
            IntPtr key;
            UIntPtr length;
            Check(NativeMethods.kvf_value_key_at(ref value, Index(index), out key, out length));
            return Utf8.FromNative(key, length);
        }

        public bool AsBool()
        {
            int result;
            Check(NativeMethods.kvf_value_as_bool(ref value, out result));
            return result != 0;
        }

        /// <summary>An integer, or a double with an integral value.</summary>
        public long AsInt()
        {
            long result;
            Check(NativeMethods.kvf_value_as_int(ref value, out result));
            return result;
        }

        /// <summary>Any number.</summary>
        public double AsDouble()
        {
            double result;
            Check(NativeMethods.kvf_value_as_double(ref value, out result));
            return result;
        }

        public string AsString()
        {
            IntPtr text;
            UIntPtr length;
            Check(NativeMethods.kvf_value_as_string(ref value, out text, out length));
            return Utf8.FromNative(text, length);
        }

        // After the native call: the event stays alive through it, and a failure throws
        // with the thread's last error.
        private void Check(KvframeStatus status)
        {
            GC.KeepAlive(owner);
            NativeMethods.Check(status);
        }

        private static byte[] Utf8Path(string path)
        {
            if (path == null) throw new ArgumentNullException("path");
            return Encoding.UTF8.GetBytes(path + "\0");
        }

        private static UIntPtr Index(int index)
        {
            if (index < 0) throw new ArgumentOutOfRangeException("index");
            return (UIntPtr)(uint)index;
        }
    }
}
