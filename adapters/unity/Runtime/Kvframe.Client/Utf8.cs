// UTF-8 both ways without Marshal.PtrToStringUTF8 / StringToCoTaskMemUTF8,
// which older Unity and mono profiles lack.
using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Text;

namespace Kvframe.Client
{
    internal static class Utf8
    {
        /// <summary>Decodes `length` bytes at `text` (a string owned by the native side).</summary>
        public static string FromNative(IntPtr text, UIntPtr length)
        {
            int n = checked((int)length.ToUInt64());
            if (text == IntPtr.Zero || n == 0) return string.Empty;
            var bytes = new byte[n];
            Marshal.Copy(text, bytes, 0, n);
            return Encoding.UTF8.GetString(bytes);
        }

        /// <summary>Decodes a NUL-terminated string (for the few calls without a length out-param).</summary>
        public static string FromNative(IntPtr text)
        {
            if (text == IntPtr.Zero) return string.Empty;
            int n = 0;
            while (Marshal.ReadByte(text, n) != 0) n++;
            return FromNative(text, (UIntPtr)n);
        }

        /// <summary>Decodes a NUL-padded fixed-size char array of a struct.</summary>
        public static string FromFixed(byte[] bytes)
        {
            int n = Array.IndexOf(bytes, (byte)0);
            return Encoding.UTF8.GetString(bytes, 0, n < 0 ? bytes.Length : n);
        }

        /// <summary>NUL-terminated UTF-8 copies of strings for the native parameter structs,
        /// freed together once the call that reads them has returned (the library copies
        /// what it keeps).</summary>
        internal sealed class Arena : IDisposable
        {
            private readonly List<IntPtr> blocks = new List<IntPtr>();

            public IntPtr Add(string text)
            {
                byte[] bytes = Encoding.UTF8.GetBytes(text);
                IntPtr block = Alloc(bytes.Length + 1);
                Marshal.Copy(bytes, 0, block, bytes.Length);
                Marshal.WriteByte(block, bytes.Length, 0);
                return block;
            }

            /// <summary>A const char* const* array of the strings.</summary>
            public IntPtr AddArray(string[] texts)
            {
                IntPtr array = Alloc(IntPtr.Size * texts.Length);
                for (int i = 0; i < texts.Length; i++)
                    Marshal.WriteIntPtr(array, i * IntPtr.Size, Add(texts[i]));
                return array;
            }

            private IntPtr Alloc(int bytes)
            {
                IntPtr block = Marshal.AllocHGlobal(Math.Max(bytes, 1));
                blocks.Add(block);
                return block;
            }

            public void Dispose()
            {
                foreach (IntPtr block in blocks) Marshal.FreeHGlobal(block);
                blocks.Clear();
            }
        }
    }
}
