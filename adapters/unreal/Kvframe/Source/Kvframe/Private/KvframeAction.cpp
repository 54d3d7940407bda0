#include "KvframeAction.h"

#include "KvframeLog.h"

UKvframeAction* UKvframeAction::FromEvent(UObject* Outer, const kvf_event* Source)
{
	UKvframeAction* Action = NewObject<UKvframeAction>(Outer);
	size_t Length = 0;
	const char* Text = kvf_event_action_json(Source, &Length);
	Action->Json = KvframeText(Text, Length);
	// The subsystem frees the polled event after the handlers: the views the getters read
	// must point into a copy this object owns.
	kvf_value Parsed = {};
	if (kvf_event_action(Source, &Parsed) == KVF_OK && kvf_event_clone(Source, &Action->Event) == KVF_OK)
	{
		kvf_event_action(Action->Event, &Action->Root);
	}
	return Action;
}

void UKvframeAction::BeginDestroy()
{
	Root = kvf_value{};
	kvf_event_free(Event);
	Event = nullptr;
	Super::BeginDestroy();
}

bool UKvframeAction::Find(const FString& Path, kvf_value& Out) const
{
	if (!Event) return false;
	const FTCHARToUTF8 PathUtf8(*Path);
	return kvf_value_get(&Root, PathUtf8.Get(), &Out) == KVF_OK;
}

bool UKvframeAction::Has(const FString& Path) const
{
	kvf_value Value = {};
	return Find(Path, Value);
}

bool UKvframeAction::GetString(const FString& Path, FString& Value) const
{
	kvf_value Found = {};
	const char* Text = nullptr;
	size_t Length = 0;
	if (!Find(Path, Found) || kvf_value_as_string(&Found, &Text, &Length) != KVF_OK) return false;
	Value = KvframeText(Text, Length);
	return true;
}

bool UKvframeAction::GetInt(const FString& Path, int64& Value) const
{
	kvf_value Found = {};
	int64_t Number = 0;
	if (!Find(Path, Found) || kvf_value_as_int(&Found, &Number) != KVF_OK) return false;
	Value = Number;
	return true;
}

bool UKvframeAction::GetFloat(const FString& Path, double& Value) const
{
	kvf_value Found = {};
	double Number = 0;
	if (!Find(Path, Found) || kvf_value_as_double(&Found, &Number) != KVF_OK) return false;
	Value = Number;
	return true;
}

bool UKvframeAction::GetBool(const FString& Path, bool& Value) const
{
	kvf_value Found = {};
	int32_t Flag = 0;
	if (!Find(Path, Found) || kvf_value_as_bool(&Found, &Flag) != KVF_OK) return false;
	Value = Flag != 0;
	return true;
}

bool UKvframeAction::GetArrayLength(const FString& Path, int32& Length) const
{
	kvf_value Found = {};
	if (!Find(Path, Found) || kvf_value_type_of(&Found) != KVF_VALUE_ARRAY) return false;
	Length = static_cast<int32>(kvf_value_size(&Found));
	return true;
}
