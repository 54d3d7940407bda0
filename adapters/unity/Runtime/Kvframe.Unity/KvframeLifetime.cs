using Kvframe.Client;
using UnityEngine;

namespace Kvframe.Unity
{
    /// <summary>Closes every native client when the code that owns it goes away. A client left
    /// open keeps a native thread and a socket alive: across Play-mode re-entry with domain
    /// reload disabled (statics survive), and under a domain reload (the managed side is
    /// unloaded while the native thread runs on). Components close their own clients in
    /// OnDisable; this catches the rest.</summary>
    internal static class KvframeLifetime
    {
        [RuntimeInitializeOnLoadMethod(RuntimeInitializeLoadType.SubsystemRegistration)]
        private static void InstallPlayer()
        {
            // Runs on every Play; with domain reload disabled the last subscription survives.
            Application.quitting -= KvframeClient.CloseAll;
            Application.quitting += KvframeClient.CloseAll;
        }

#if UNITY_EDITOR
        [UnityEditor.InitializeOnLoadMethod]
        private static void InstallEditor()
        {
            // Editor events belong to the domain: a reload starts with none subscribed.
            UnityEditor.AssemblyReloadEvents.beforeAssemblyReload += KvframeClient.CloseAll;
            UnityEditor.EditorApplication.playModeStateChanged += state =>
            {
                if (state == UnityEditor.PlayModeStateChange.ExitingPlayMode) KvframeClient.CloseAll();
            };
        }
#endif
    }
}
