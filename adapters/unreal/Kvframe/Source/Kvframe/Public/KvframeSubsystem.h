// One kvframe client per game instance: a PIE session gets its own and closes
// it when the session ends, so no native handle outlives the world it served.
#pragma once

#include "CoreMinimal.h"
#include "Subsystems/GameInstanceSubsystem.h"
#include "Tickable.h"
#include "kvframe_client.h"

#include "KvframeSubsystem.generated.h"

class UKvframeNpcComponent;

/** Owns a kvf_client and closes it when the last reference goes: normally the
 *  subsystem's in Deinitialize, or a pool task's still blocked in the library, so
 *  the client is never freed under a call. */
struct FKvframeClient
{
	explicit FKvframeClient(kvf_client* In) : Ptr(In) {}
	~FKvframeClient() { kvf_client_close(Ptr); }
	kvf_client* const Ptr;
};
using FKvframeClientRef = TSharedPtr<FKvframeClient, ESPMode::ThreadSafe>;

UCLASS()
class KVFRAME_API UKvframeSubsystem : public UGameInstanceSubsystem, public FTickableGameObject
{
	GENERATED_BODY()

public:
	virtual void Initialize(FSubsystemCollectionBase& Collection) override;
	virtual void Deinitialize() override;

	/** Opens a session with Owner's settings on a pool thread (it blocks until the server
	 *  answers); Owner gets HandleSessionOpened or OnError on the game thread. */
	void OpenSession(UKvframeNpcComponent* Owner);
	/** Stops routing the session's replies and closes it on the server from a pool thread. */
	void CloseSession(uint64 Session);
	/** For the library's non-blocking calls on the game thread; null when not connected. */
	kvf_client* Client() const { return Handle ? Handle->Ptr : nullptr; }

	// FTickableGameObject: replies are polled once per frame (see Tick).
	virtual void Tick(float DeltaTime) override;
	virtual ETickableTickType GetTickableTickType() const override { return ETickableTickType::Conditional; }
	virtual bool IsTickable() const override { return Handle.IsValid(); }
	virtual bool IsTickableWhenPaused() const override { return true; }
	virtual TStatId GetStatId() const override;

private:
	FKvframeClientRef Handle;
	/** Whose replies are whose: every event names its session. */
	TMap<uint64, TWeakObjectPtr<UKvframeNpcComponent>> Sessions;
};
