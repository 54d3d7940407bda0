// The Kvframe runtime module: a thin UE layer over libkvframe_client, linked as
// a third-party library from Source/ThirdParty/kvframe/ (filled by
// adapters/unreal/stage_thirdparty.sh from `cmake --install --component client`:
// include/kvframe_client.h and the library under lib/<platform>/).
using System.IO;
using UnrealBuildTool;

public class Kvframe : ModuleRules
{
	public Kvframe(ReadOnlyTargetRules Target) : base(Target)
	{
		PCHUsage = PCHUsageMode.UseExplicitOrSharedPCHs;
		PublicDependencyModuleNames.AddRange(new[] { "Core", "CoreUObject", "Engine", "DeveloperSettings" });
		PrivateDependencyModuleNames.Add("Projects"); // IPluginManager: where the DLL is on Windows

		string ThirdParty = Path.GetFullPath(Path.Combine(ModuleDirectory, "..", "ThirdParty", "kvframe"));
		PublicIncludePaths.Add(Path.Combine(ThirdParty, "include"));

		if (Target.Platform == UnrealTargetPlatform.Win64)
		{
			string Lib = Path.Combine(ThirdParty, "lib", "Win64");
			PublicAdditionalLibraries.Add(Path.Combine(Lib, "kvframe_client.lib"));
			// Delay-loaded and loaded by path in StartupModule: the DLL sits in the plugin's
			// Binaries, which is not on the editor's DLL search path.
			PublicDelayLoadDLLs.Add("kvframe_client.dll");
			RuntimeDependencies.Add("$(BinaryOutputDir)/kvframe_client.dll", Path.Combine(Lib, "kvframe_client.dll"));
		}
		else if (Target.Platform == UnrealTargetPlatform.Linux)
		{
			// UBT adds this directory to the module's rpath; the runtime dependencies stage it
			// into packaged builds at the same relative path. Both names are staged: the
			// binary records the library's SONAME (libkvframe_client.so.N, N = KVF_ABI_VERSION).
			string Lib = Path.Combine(ThirdParty, "lib", "Linux", "x86_64-unknown-linux-gnu");
			PublicAdditionalLibraries.Add(Path.Combine(Lib, "libkvframe_client.so"));
			foreach (string File in Directory.Exists(Lib) ? Directory.GetFiles(Lib, "libkvframe_client.so*") : new string[0])
			{
				RuntimeDependencies.Add(File);
			}
		}
	}
}
