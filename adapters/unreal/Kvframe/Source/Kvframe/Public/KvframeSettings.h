// Project Settings > Plugins > kvframe (stored in Config/DefaultGame.ini).
#pragma once

#include "CoreMinimal.h"
#include "Engine/DeveloperSettings.h"

#include "KvframeSettings.generated.h"

UCLASS(Config = Game, DefaultConfig, meta = (DisplayName = "kvframe"))
class KVFRAME_API UKvframeSettings : public UDeveloperSettings
{
	GENERATED_BODY()

public:
	/** ZeroMQ endpoint of kvframe-serve, e.g. tcp://127.0.0.1:5555. Empty: the library's default. */
	UPROPERTY(Config, EditAnywhere, Category = "Server")
	FString Endpoint;
};
