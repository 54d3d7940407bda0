#include "KvframeSubsystem.h"

#include "Async/Async.h"
#include "KvframeLog.h"
#include "KvframeNpcComponent.h"
#include "KvframeSettings.h"
#include "Misc/App.h"
#include "Misc/EngineVersion.h"

void UKvframeSubsystem::Initialize(FSubsystemCollectionBase& Collection)
{
	Super::Initialize(Collection);
	const UKvframeSettings* Settings = GetDefault<UKvframeSettings>();
	const FString& Endpoint = Settings->Endpoint;
	const FTCHARToUTF8 EndpointUtf8(*Endpoint);
	const FTCHARToUTF8 Name(*FString::Printf(TEXT("unreal %s / %s"), *FEngineVersion::Current().ToString(), FApp::GetProjectName()));
	const FTCHARToUTF8 ServerKey(*Settings->ServerPublicKey), PublicKey(*Settings->ClientPublicKey),
		SecretKey(*Settings->ClientSecretKey);
	kvf_client_params Params;
	kvf_client_params_init(&Params, sizeof Params);
	if (!Endpoint.IsEmpty()) Params.endpoint = EndpointUtf8.Get();
	if (!Settings->ServerPublicKey.IsEmpty())  // all three or none: kvf_client_connect says which is wrong
	{
		Params.server_public_key = ServerKey.Get();
		Params.client_public_key = PublicKey.Get();
		Params.client_secret_key = SecretKey.Get();
	}
	Params.client_name = Name.Get();
	// Connect lazily: kvf_client_connect returns at once and ZeroMQ connects (and reconnects)
	// on the library's thread, so the game thread never waits for the server. A server that
	// is not there shows up as KVF_ERR_TIMEOUT when the first session opens.
	Params.connect_timeout_ms = 0;
	kvf_client* Client = nullptr;
	if (kvf_client_connect(&Params, &Client) != KVF_OK)
	{
		UE_LOG(LogKvframe, Error, TEXT("kvframe: %s"), *KvframeLastError());
		return;
	}
	Handle = MakeShared<FKvframeClient, ESPMode::ThreadSafe>(Client);
}

void UKvframeSubsystem::Deinitialize()
{
	Sessions.Empty();
	Handle.Reset(); // kvf_client_close (bounded: about a second) unless a pool task still holds it
	Super::Deinitialize();
}

TStatId UKvframeSubsystem::GetStatId() const
{
	RETURN_QUICK_DECLARE_CYCLE_STAT(UKvframeSubsystem, STATGROUP_Tickables);
}

// Polling, not callbacks: with a NULL callback every reply waits in the library's queue
// and kvf_poll (timeout 0: never waits) hands it out here, on the game thread, so no
// library thread ever touches a UObject and nothing needs marshalling. One poll per frame
// serves every component: the queue is the client's, so components polling it themselves
// would take each other's replies.
void UKvframeSubsystem::Tick(float)
{
	const FKvframeClientRef Pinned = Handle; // a handler may end the game instance
	kvf_event* Event = nullptr;
	while (kvf_poll(Pinned->Ptr, 0, &Event) == KVF_OK)
	{
		if (UKvframeNpcComponent* Owner = Sessions.FindRef(kvf_event_session(Event)).Get())
		{
			Owner->HandleEvent(Event);
		}
		else if (kvf_event_type_of(Event) == KVF_EVENT_ERROR)
		{
			size_t Length = 0;
			const char* Text = kvf_event_text(Event, &Length);
			UE_LOG(LogKvframe, Warning, TEXT("kvframe: %s"), *KvframeText(Text, Length));
		}
		kvf_event_free(Event);
	}
}

void UKvframeSubsystem::OpenSession(UKvframeNpcComponent* Owner)
{
	if (!Handle)
	{
		Owner->OnError.Broadcast(KVF_ERR_CLOSED, TEXT("kvframe is not connected (see the log)"));
		return;
	}
	// kvf_session_open blocks until the server answers: a pool thread waits, then the
	// result goes back to the game thread.
	Async(EAsyncExecution::ThreadPool,
		[Client = Handle, GameId = Owner->GameId, Rules = Owner->RulesJson, Prompt = Owner->SystemPrompt,
		 Mode = Owner->Mode, WeakThis = TWeakObjectPtr<UKvframeSubsystem>(this),
		 WeakOwner = TWeakObjectPtr<UKvframeNpcComponent>(Owner)]
		{
			const FTCHARToUTF8 GameIdUtf8(*GameId), RulesUtf8(*Rules), PromptUtf8(*Prompt);
			kvf_session_params Params;
			kvf_session_params_init(&Params, sizeof Params);
			Params.game_id = GameIdUtf8.Get();
			Params.rules_json = RulesUtf8.Get();       // "": the defaults
			Params.system_prompt = PromptUtf8.Get();   // "": the model's
			Params.mode = static_cast<kvf_mode>(Mode);
			kvf_session Session = 0;
			const kvf_status Status = kvf_session_open(Client->Ptr, &Params, &Session);
			const FString Error = Status == KVF_OK ? FString() : KvframeLastError();
			AsyncTask(ENamedThreads::GameThread, [Client, Session, Status, Error, WeakThis, WeakOwner]
			{
				UKvframeSubsystem* Self = WeakThis.Get();
				if (!Self || Self->Handle != Client) return; // the client closed meanwhile, and its sessions with it
				UKvframeNpcComponent* Component = WeakOwner.Get();
				if (Status != KVF_OK)
				{
					if (Component) Component->OnError.Broadcast(Status, Error);
					return;
				}
				if (!Component || !Component->HasBegunPlay())
				{
					Self->CloseSession(Session);
					return;
				}
				Self->Sessions.Add(Session, Component);
				Component->HandleSessionOpened(Session);
			});
		});
}

void UKvframeSubsystem::CloseSession(uint64 Session)
{
	Sessions.Remove(Session);
	if (!Handle) return;
	// kvf_session_close blocks until the server answers.
	Async(EAsyncExecution::ThreadPool, [Client = Handle, Session] { kvf_session_close(Client->Ptr, Session); });
}
