// An NPC (or any actor) asking a model about the game: it owns one kvframe
// session, its own view of the game state (hidden information stays hidden:
// give each player its own), sends frames and queries, and raises Blueprint
// events for actions, streamed commentary, results and errors on the game thread.
#pragma once

#include "CoreMinimal.h"
#include "Components/ActorComponent.h"
#include "KvframeAction.h"
#include "kvframe_client.h"

#include "KvframeNpcComponent.generated.h"

class UKvframeSubsystem;

/** kvf_frame_format */
UENUM(BlueprintType)
enum class EKvframeFrameFormat : uint8
{
	Whole = 0,
	MergePatch = 1 UMETA(DisplayName = "Merge Patch (RFC 7386)"),
	JsonPatch = 2 UMETA(DisplayName = "JSON Patch (RFC 6902)"),
};

/** kvf_mode */
UENUM(BlueprintType)
enum class EKvframeMode : uint8
{
	Full = 0,
	Prefix = 1,
	Block = 2,
};

DECLARE_DYNAMIC_MULTICAST_DELEGATE(FKvframeReadyEvent);
DECLARE_DYNAMIC_MULTICAST_DELEGATE_OneParam(FKvframeTextEvent, const FString&, Text);
DECLARE_DYNAMIC_MULTICAST_DELEGATE_TwoParams(FKvframeActionEvent, const FString&, ActionJson, UKvframeAction*, Action);
DECLARE_DYNAMIC_MULTICAST_DELEGATE_TwoParams(FKvframeErrorEvent, int32, Code, const FString&, Message);

UCLASS(ClassGroup = (AI), meta = (BlueprintSpawnableComponent))
class KVFRAME_API UKvframeNpcComponent : public UActorComponent
{
	GENERATED_BODY()

public:
	UKvframeNpcComponent();

	UPROPERTY(EditAnywhere, BlueprintReadWrite, Category = "Kvframe")
	FString NpcId = TEXT("npc");

	/** JSON Schema the actions of RequestAction must satisfy; empty: none. */
	UPROPERTY(EditAnywhere, BlueprintReadWrite, Category = "Kvframe", meta = (MultiLine = true))
	FString ActionSchema;

	/** 0: the library's default. */
	UPROPERTY(EditAnywhere, BlueprintReadWrite, Category = "Kvframe", meta = (ClampMin = 0))
	int32 MaxTokens = 0;

	/** Session settings, used when play begins. */
	UPROPERTY(EditAnywhere, Category = "Kvframe|Session")
	FString GameId;
	/** json_blocker rules (JSON); empty: the defaults. */
	UPROPERTY(EditAnywhere, Category = "Kvframe|Session", meta = (MultiLine = true))
	FString RulesJson;
	/** Empty: the model's default. */
	UPROPERTY(EditAnywhere, Category = "Kvframe|Session", meta = (MultiLine = true))
	FString SystemPrompt;
	UPROPERTY(EditAnywhere, Category = "Kvframe|Session")
	EKvframeMode Mode = EKvframeMode::Block;

	/** The session is open: frames and queries may be sent. */
	UPROPERTY(BlueprintAssignable, Category = "Kvframe")
	FKvframeReadyEvent OnReady;
	/** The action of a RequestAction (valid against ActionSchema): its JSON, and Action to read
	 *  its values by path (GetInt "bet.amount", GetString "target.id", ...) without parsing. */
	UPROPERTY(BlueprintAssignable, Category = "Kvframe")
	FKvframeActionEvent OnAction;
	/** Streamed text of a commentary Query, in order. */
	UPROPERTY(BlueprintAssignable, Category = "Kvframe")
	FKvframeTextEvent OnChunk;
	/** The whole text of every answer (after its chunks, and after OnAction). */
	UPROPERTY(BlueprintAssignable, Category = "Kvframe")
	FKvframeTextEvent OnResult;
	/** Code: a kvf_status (protocol error codes 1..15, client codes 100+). */
	UPROPERTY(BlueprintAssignable, Category = "Kvframe")
	FKvframeErrorEvent OnError;

	/** Sends this frame's game state (or a patch against the last). Returns false before
	 *  OnReady (the next whole frame carries the whole state) or when refused. Never blocks. */
	UFUNCTION(BlueprintCallable, Category = "Kvframe")
	bool SendFrame(const FString& Json, EKvframeFrameFormat Format = EKvframeFrameFormat::Whole);

	/** Asks about the latest frame: commentary streams OnChunk, then OnResult. Never blocks. */
	UFUNCTION(BlueprintCallable, Category = "Kvframe")
	bool Query(const FString& Instruction, bool bCommentary = true);

	/** Asks for this NPC's action: OnAction with the JSON and the parsed action, then OnResult.
	 *  Never blocks. */
	UFUNCTION(BlueprintCallable, Category = "Kvframe")
	bool RequestAction(const FString& Instruction);

	UFUNCTION(BlueprintPure, Category = "Kvframe")
	bool IsReady() const { return Session != 0; }

	// From UKvframeSubsystem, on the game thread.
	void HandleSessionOpened(uint64 InSession);
	void HandleEvent(const kvf_event* Event);

protected:
	virtual void BeginPlay() override;
	virtual void EndPlay(const EEndPlayReason::Type Reason) override;

private:
	bool Submit(kvf_query_params& Params, const FString& Instruction, const FString& Schema);
	bool Succeeded(kvf_status Status);
	kvf_client* ReadyClient() const;
	UKvframeSubsystem* Subsystem() const;

	uint64 Session = 0;
	uint64 LastFrame = 0;
};
