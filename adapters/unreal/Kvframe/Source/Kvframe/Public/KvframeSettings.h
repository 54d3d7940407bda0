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

	/** CURVE: the server's public key (Z85, 40 characters; kvframe-serve --gen-keys writes it to PREFIX.pub).
	 *  Set all three keys to encrypt and to be known to the server by your key (your sessions, block cache
	 *  and Stats are then your own across reconnects); leave all three empty for a loopback server. */
	UPROPERTY(Config, EditAnywhere, Category = "Security")
	FString ServerPublicKey;

	/** CURVE: this game's public key (Z85), as listed in the server's --curve-allow / --cache-group files. */
	UPROPERTY(Config, EditAnywhere, Category = "Security")
	FString ClientPublicKey;

	/** CURVE: this game's secret key (Z85). Keep it out of shipped builds' plain config where players can read
	 *  it if the key identifies your studio's servers rather than one player. */
	UPROPERTY(Config, EditAnywhere, Category = "Security")
	FString ClientSecretKey;
};
