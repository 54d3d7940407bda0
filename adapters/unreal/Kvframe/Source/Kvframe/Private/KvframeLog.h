#pragma once

#include "CoreMinimal.h"
#include "kvframe_client.h"

DECLARE_LOG_CATEGORY_EXTERN(LogKvframe, Log, All);

/** A UTF-8 string of the library (owned by it, `Length` bytes) as an FString. */
inline FString KvframeText(const char* Text, size_t Length)
{
	const FUTF8ToTCHAR Converted(Text, static_cast<int32>(Length));
	return FString(Converted.Length(), Converted.Get());
}

/** The calling thread's last library error: read it on the thread that made the failed call. */
inline FString KvframeLastError()
{
	return UTF8_TO_TCHAR(kvf_client_last_error(nullptr));
}
