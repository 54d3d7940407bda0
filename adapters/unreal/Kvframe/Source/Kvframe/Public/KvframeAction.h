// An NPC action as OnAction hands it out: the JSON text and the parsed form,
// read by path ("amount", "target.id", "cards[1]") without a JSON parser. It
// keeps its own copy of the reply (kvf_event_clone), so it may be stored and
// read after the event; the copy is freed when the object is destroyed.
#pragma once

#include "CoreMinimal.h"
#include "UObject/Object.h"
#include "kvframe_client.h"

#include "KvframeAction.generated.h"

/** Paths: object keys joined by '.', array indices in brackets ("bet.amount", "cards[1]",
 *  "moves[0].to"; "" is the whole action). Every getter returns false, leaving Value as
 *  it was, when the path is not there or the value is of another type. Game thread only. */
UCLASS(BlueprintType, Transient)
class KVFRAME_API UKvframeAction : public UObject
{
	GENERATED_BODY()

public:
	/** The action JSON (valid against the component's ActionSchema). */
	UPROPERTY(BlueprintReadOnly, Category = "Kvframe|Action")
	FString Json;

	/** Whether the action has a value at Path (a JSON null counts). */
	UFUNCTION(BlueprintPure, Category = "Kvframe|Action")
	bool Has(const FString& Path) const;

	/** A string. */
	UFUNCTION(BlueprintPure, Category = "Kvframe|Action", meta = (ReturnDisplayName = "Success"))
	bool GetString(const FString& Path, FString& Value) const;

	/** An integer, or a number with an integral value within int64. */
	UFUNCTION(BlueprintPure, Category = "Kvframe|Action", meta = (ReturnDisplayName = "Success"))
	bool GetInt(const FString& Path, int64& Value) const;

	/** Any number. */
	UFUNCTION(BlueprintPure, Category = "Kvframe|Action", meta = (ReturnDisplayName = "Success"))
	bool GetFloat(const FString& Path, double& Value) const;

	/** true or false. */
	UFUNCTION(BlueprintPure, Category = "Kvframe|Action", meta = (ReturnDisplayName = "Success"))
	bool GetBool(const FString& Path, bool& Value) const;

	/** The number of elements of an array (false for anything else); read them with "Path[i]". */
	UFUNCTION(BlueprintPure, Category = "Kvframe|Action", meta = (ReturnDisplayName = "Success"))
	bool GetArrayLength(const FString& Path, int32& Length) const;

	/** For C++: the value at Path, a view into this object's copy of the reply, valid while
	 *  this object is (kvf_value_type_of, kvf_value_at, kvf_value_key_at, ... on it). */
	bool Find(const FString& Path, kvf_value& Out) const;

	/** A Result's action for OnAction: Json from kvf_event_action_json and a copy of the event
	 *  for the parsed form (without one, the getters return false and only Json is set). */
	static UKvframeAction* FromEvent(UObject* Outer, const kvf_event* Source);

	virtual void BeginDestroy() override;

private:
	kvf_event* Event = nullptr; // the clone; owned
	kvf_value Root = {};        // its action, a view into Event
};
