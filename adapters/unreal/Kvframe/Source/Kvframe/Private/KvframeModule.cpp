#include "Interfaces/IPluginManager.h"
#include "KvframeLog.h"
#include "Misc/Paths.h"
#include "Modules/ModuleManager.h"

DEFINE_LOG_CATEGORY(LogKvframe);

class FKvframeModule : public IModuleInterface
{
public:
	virtual void StartupModule() override
	{
#if PLATFORM_WINDOWS
		// kvframe_client.dll is delay-loaded (Kvframe.Build.cs) from the plugin's Binaries:
		// load it by path before the first call, so a missing DLL stops with this message
		// instead of a delay-load exception somewhere later.
		const FString Dir = FPaths::Combine(IPluginManager::Get().FindPlugin(TEXT("Kvframe"))->GetBaseDir(),
		                                    TEXT("Binaries"), TEXT("Win64"));
		Library = FPlatformProcess::GetDllHandle(*FPaths::Combine(Dir, TEXT("kvframe_client.dll")));
		if (!Library)
		{
			UE_LOG(LogKvframe, Fatal, TEXT("kvframe_client.dll not found in %s: run adapters/unreal/stage_thirdparty.sh and rebuild"), *Dir);
		}
#endif
		// Elsewhere the library is a link-time dependency found through the module's rpath.
	}

	virtual void ShutdownModule() override
	{
		// Clients are closed by their subsystems (Deinitialize) before modules shut down.
		if (Library) FPlatformProcess::FreeDllHandle(Library);
		Library = nullptr;
	}

private:
	void* Library = nullptr;
};

IMPLEMENT_MODULE(FKvframeModule, Kvframe)
