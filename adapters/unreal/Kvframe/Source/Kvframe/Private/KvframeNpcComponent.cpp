#include "KvframeNpcComponent.h"

#include "Engine/GameInstance.h"
#include "Engine/World.h"
#include "KvframeLog.h"
#include "KvframeSubsystem.h"

static_assert(static_cast<int>(EKvframeFrameFormat::JsonPatch) == KVF_FRAME_JSON_PATCH, "EKvframeFrameFormat mirrors kvf_frame_format");
static_assert(static_cast<int>(EKvframeMode::Block) == KVF_MODE_BLOCK, "EKvframeMode mirrors kvf_mode");

UKvframeNpcComponent::UKvframeNpcComponent()
{
	PrimaryComponentTick.bCanEverTick = false; // UKvframeSubsystem polls for every component
}

void UKvframeNpcComponent::BeginPlay()
{
	Super::BeginPlay();
	if (UKvframeSubsystem* Kvframe = Subsystem()) Kvframe->OpenSession(this);
}

void UKvframeNpcComponent::EndPlay(const EEndPlayReason::Type Reason)
{
	UKvframeSubsystem* Kvframe = Subsystem();
	if (Kvframe && Session != 0) Kvframe->CloseSession(Session);
	Session = 0;
	Super::EndPlay(Reason);
}

void UKvframeNpcComponent::HandleSessionOpened(uint64 InSession)
{
	Session = InSession;
	LastFrame = 0;
	OnReady.Broadcast();
}

void UKvframeNpcComponent::HandleEvent(const kvf_event* Event)
{
	size_t Length = 0;
	const char* Text = kvf_event_text(Event, &Length);
	switch (kvf_event_type_of(Event))
	{
	case KVF_EVENT_CHUNK:
		OnChunk.Broadcast(KvframeText(Text, Length));
		break;
	case KVF_EVENT_RESULT:
	{
		size_t ActionLength = 0;
		kvf_event_action_json(Event, &ActionLength);
		if (ActionLength > 0)
		{
			// Event is freed after this returns; the action keeps its own copy for Blueprints.
			UKvframeAction* Action = UKvframeAction::FromEvent(this, Event);
			OnAction.Broadcast(Action->Json, Action);
		}
		OnResult.Broadcast(KvframeText(Text, Length));
		break;
	}
	case KVF_EVENT_ERROR:
		OnError.Broadcast(kvf_event_error_code(Event), KvframeText(Text, Length));
		break;
	default: // frame acks: the library drops them (frames are sent without a callback)
		break;
	}
}

bool UKvframeNpcComponent::SendFrame(const FString& Json, EKvframeFrameFormat Format)
{
	kvf_client* Client = ReadyClient();
	if (!Client) return false;
	const FTCHARToUTF8 Utf8(*Json);
	// Frame numbers must increase per session; the library copies the frame and sends it
	// from its own thread.
	if (!Succeeded(kvf_send_frame(Client, Session, LastFrame + 1, static_cast<kvf_frame_format>(Format), Utf8.Get(),
	                              Utf8.Length(), nullptr, nullptr, nullptr)))
	{
		return false;
	}
	++LastFrame;
	return true;
}

bool UKvframeNpcComponent::Query(const FString& Instruction, bool bCommentary)
{
	kvf_query_params Params;
	kvf_query_params_init(&Params, sizeof Params);
	Params.kind = bCommentary ? KVF_TASK_COMMENTARY : KVF_TASK_TEXT;
	Params.stream = bCommentary ? 1 : 0;
	return Submit(Params, Instruction, FString());
}

bool UKvframeNpcComponent::RequestAction(const FString& Instruction)
{
	kvf_query_params Params;
	kvf_query_params_init(&Params, sizeof Params);
	Params.kind = KVF_TASK_NPC_ACTION;
	return Submit(Params, Instruction, ActionSchema);
}

bool UKvframeNpcComponent::Submit(kvf_query_params& Params, const FString& Instruction, const FString& Schema)
{
	kvf_client* Client = ReadyClient();
	if (!Client)
	{
		OnError.Broadcast(KVF_ERR_INVALID_ARGUMENT, TEXT("the session is not open yet: wait for OnReady"));
		return false;
	}
	const FTCHARToUTF8 InstructionUtf8(*Instruction), NpcUtf8(*NpcId), SchemaUtf8(*Schema);
	Params.instruction = InstructionUtf8.Get();
	Params.npc_id = NpcUtf8.Get();
	if (!Schema.IsEmpty()) Params.output_schema = SchemaUtf8.Get();
	if (MaxTokens > 0) Params.max_tokens = static_cast<uint32_t>(MaxTokens);
	// Returns at once (the library copies the query); the answer comes through Tick's poll.
	return Succeeded(kvf_query(Client, Session, &Params, nullptr, nullptr, nullptr));
}

bool UKvframeNpcComponent::Succeeded(kvf_status Status)
{
	if (Status == KVF_OK) return true;
	OnError.Broadcast(Status, KvframeLastError());
	return false;
}

kvf_client* UKvframeNpcComponent::ReadyClient() const
{
	UKvframeSubsystem* Kvframe = Subsystem();
	return Kvframe && Session != 0 ? Kvframe->Client() : nullptr;
}

UKvframeSubsystem* UKvframeNpcComponent::Subsystem() const
{
	const UWorld* World = GetWorld();
	const UGameInstance* GameInstance = World ? World->GetGameInstance() : nullptr;
	return GameInstance ? GameInstance->GetSubsystem<UKvframeSubsystem>() : nullptr;
}
