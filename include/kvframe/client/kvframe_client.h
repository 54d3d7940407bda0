/* kvframe_client.h — the native client every game-engine adapter is built on
 * (Unity by P/Invoke, Unreal as a third-party library, the Hold'em bot, your
 * own engine). Plain C: opaque handles, parameter structs with defaults,
 * status codes and a last-error string; nothing is thrown across it.
 *
 *   kvf_client_params params;
 *   kvf_client_params_init(&params, sizeof params);   // the defaults, as far as your header has fields
 *   params.endpoint = "tcp://127.0.0.1:5555";
 *   kvf_client* client;
 *   if (kvf_client_connect(&params, &client) != KVF_OK) { puts(kvf_client_last_error(NULL)); ... }
 *
 *   kvf_session_params sp;
 *   kvf_session_params_init(&sp, sizeof sp);
 *   sp.game_id = "holdem";
 *   kvf_session session;
 *   kvf_session_open(client, &sp, &session);            // blocks until the server answers
 *
 *   kvf_send_frame(client, session, 1, KVF_FRAME_WHOLE, json, json_len, NULL, NULL, NULL);
 *   kvf_query_params q;
 *   kvf_query_params_init(&q, sizeof q);
 *   q.instruction = "What does p3 do?";
 *   uint64_t request;
 *   kvf_query(client, session, &q, NULL, NULL, &request); // NULL callback: poll for it
 *   ...
 *   kvf_event* e;
 *   while (kvf_poll(client, 0, &e) == KVF_OK) {          // e.g. once per game tick
 *     if (kvf_event_type(e) == KVF_EVENT_RESULT) use(kvf_event_text(e, NULL));
 *     kvf_event_free(e);
 *   }
 *   kvf_client_close(client);
 *
 * Threads. Each client runs one background thread that owns its ZeroMQ
 * socket; every function here may be called from any thread. Replies reach
 * the caller one of two ways, chosen per request:
 *   - a callback, called on the client's background thread (never on yours:
 *     marshal to your game thread before touching engine objects; the event
 *     is valid only during the call, and the callback must not block: the
 *     blocking calls, session open/close and stats, are refused there with
 *     KVF_ERR_INVALID_ARGUMENT, and kvf_client_close is ignored), or
 *   - with a NULL callback, an event in the client's queue that kvf_poll()
 *     hands out on the thread that polls (the game thread, typically).
 * Events are never dropped: a request whose callback is NULL always leaves
 * its Result or Error in the queue. Frame acks are the exception by design:
 * with a NULL callback an ack is discarded, but an Error about a frame still
 * goes to the queue.
 *
 * Keepalive. The server closes the sessions of a client it has heard nothing
 * from for its --session-idle-s. While a client holds sessions and has sent
 * nothing for a third of that (the server says it in its HelloReply), the
 * background thread sends a Ping: a quiet game keeps its sessions, one that
 * vanished without kvf_client_close loses them. Nothing to call.
 *
 * Recovery. The client reconnects by itself (ZeroMQ) and notices a server
 * restart (connection events and the server's instance id, asked with a Hello
 * after every reconnect; an UnknownSession error for a session it has open is
 * the backstop). It then fails the requests that were in flight with
 * KVF_ERR_DISCONNECTED, re-opens every open session with the parameters it
 * was opened with, and re-sends its last whole frame and the patches after
 * it, before any newer request of that session. The kvf_session handle stays
 * the same. Details:
 *   - A frame in flight when the connection dropped is re-sent with the others
 *     and keeps its request id: its ack (or error) still comes, once. Only
 *     when the same server answers after the drop (a network blip, not a
 *     restart) does it fail with KVF_ERR_DISCONNECTED: whether it arrived
 *     cannot be known.
 *   - A frame the server refused is never re-sent, nor the patches sent
 *     after it (the server refused those too): after a restart the new
 *     server holds what the old one held.
 *   - Requests made while the connection is down wait (up to
 *     request_timeout_ms) and are sent once the session is back.
 *   - What a session keeps for this is bounded (4096 frames or 64 MiB since
 *     the last whole frame); beyond it nothing is re-sent and, after a
 *     restart, the game's next patches get KVF_ERR_OUT_OF_ORDER until it sends
 *     a whole frame. Send a whole frame every so often.
 *   - If re-opening fails, the waiting requests fail with the server's error
 *     and later ones with KVF_ERR_UNKNOWN_SESSION: close the handle and open
 *     a new session.
 *
 * Errors. Functions return kvf_status: KVF_OK or a code below. The message of
 * the calling thread's last failure is kvf_client_last_error(). Errors that
 * arrive later (from the server) come as KVF_EVENT_ERROR events carrying the
 * protocol's error code (kvf_event_error_code) and message. A code this
 * client does not know (a newer server's) is KVF_ERR_UNKNOWN, never a value
 * outside kvf_status; the number the server sent is kvf_event_raw_error_code
 * (events) or in the last error (calls).
 */
#ifndef KVFRAME_CLIENT_H
#define KVFRAME_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(KVFRAME_CLIENT_BUILD)
#define KVF_API __declspec(dllexport)
#elif defined(_WIN32)
#define KVF_API __declspec(dllimport)
#else
#define KVF_API __attribute__((visibility("default")))
#endif

/* The C ABI's version. MINOR changes when something is added (a function, a
 * field at the end of a struct, a status), PATCH for fixes; MAJOR (from 1.0
 * on) when a layout or a meaning changes. KVF_ABI_VERSION is the library's
 * soname (libkvframe_client.so.N): it changes only when a program built
 * against an older header would break, never for an addition. */
#define KVF_VERSION_MAJOR 0
#define KVF_VERSION_MINOR 6
#define KVF_VERSION_PATCH 0
#define KVF_ABI_VERSION 1
#define KVF_MAKE_VERSION(major, minor, patch) ((major) * 10000 + (minor) * 100 + (patch))
#define KVF_VERSION KVF_MAKE_VERSION(KVF_VERSION_MAJOR, KVF_VERSION_MINOR, KVF_VERSION_PATCH)

/* The loaded library's version, KVF_VERSION of the header it was built from
 * (compare it with yours at startup); major, minor and patch may be NULL. */
KVF_API int32_t kvf_version(int32_t* major, int32_t* minor, int32_t* patch);

/* Status of a call. Values match the protocol's ErrorCode (protocol/kvframe.fbs)
 * where the meaning is the same; the client's own start at 200. */
typedef enum kvf_status {
  KVF_OK = 0,
  KVF_ERR_MALFORMED = 1,
  KVF_ERR_TOO_LARGE = 2,
  KVF_ERR_WRONG_VERSION = 3,
  KVF_ERR_UNKNOWN_SESSION = 4,
  KVF_ERR_BAD_REQUEST = 5,
  KVF_ERR_BAD_JSON = 6,
  KVF_ERR_OUT_OF_ORDER = 7,
  KVF_ERR_DEADLINE = 8,
  KVF_ERR_BUSY = 9,
  KVF_ERR_CONTEXT_FULL = 10,
  KVF_ERR_ENGINE = 11,
  KVF_ERR_UNSUPPORTED = 12,
  KVF_ERR_SHUTTING_DOWN = 13,
  KVF_ERR_INTERNAL = 14,
  KVF_ERR_UNSATISFIABLE = 15,
  KVF_ERR_QUOTA_EXCEEDED = 16, /* over this client's quota on the server (the message says which) */
  KVF_ERR_STALE_BASE = 17,     /* a patch made against a frame the server does not hold (refused or
                                  superseded): nothing changed; send the whole frame */
  KVF_ERR_UNKNOWN_ADAPTER = 18, /* kvf_session_params.adapter names no adapter the server loaded
                                   (the last error lists them): no session opened */
  KVF_ERR_TIMEOUT = 100,       /* no reply within the client's timeout */
  KVF_ERR_DISCONNECTED = 101,  /* the connection dropped while the request was in flight */
  KVF_ERR_INVALID_ARGUMENT = 200, /* a NULL handle, a bad parameter (the last error says which) */
  KVF_ERR_CLOSED = 201,        /* the client is closed */
  KVF_ERR_EMPTY = 202,         /* kvf_poll: no event within the timeout (not a failure) */
  KVF_ERR_CONNECT = 203,       /* the endpoint or keys were rejected by ZeroMQ */
  KVF_ERR_NOT_FOUND = 204,     /* kvf_value: no such key or index; kvf_event_action: no action;
                                  kvf_event_frame_ack: not a frame ack */
  KVF_ERR_TYPE_MISMATCH = 205, /* kvf_value: the value is not of the type asked for */
  KVF_ERR_UNKNOWN = 206        /* 0.5: a code this client does not know, from a newer server */
} kvf_status;

/* Stable name of a status, e.g. "KVF_ERR_UNKNOWN_SESSION". */
KVF_API const char* kvf_status_name(kvf_status status);

/* Every params and out struct below begins with struct_size, the size of the
 * caller's struct as its header declared it. Fill a params struct with
 * kvf_*_params_init(&params, sizeof params), which sets the defaults and
 * struct_size; on an out struct set struct_size before the call
 * (report.struct_size = sizeof report). The library reads and writes only
 * that many bytes, so a program built against an older header, whose structs
 * lack fields added since, keeps working: params it does not have take their
 * defaults, and out fields it does not have are not written. A struct_size
 * smaller than the struct had when struct_size came in (0.3.0) is
 * KVF_ERR_INVALID_ARGUMENT.
 *
 * A program built against a newer header than the library's passes larger
 * params structs. Every field added from 0.5 on takes all-zero bytes as its
 * default, and an older library's kvf_*_params_init zeroes what it does not
 * know; so an unset newer field is what the older library does anyway, and
 * a set one (any nonzero byte past the fields the library knows) is refused
 * with KVF_ERR_UNSUPPORTED, the last error naming the struct, the byte and
 * the library's version. Fields of out structs the library lacks are left
 * as the caller had them.
 *
 * Up to 0.4 the defaults came by value (kvf_*_default_params()), which a
 * library cannot do for a struct that grew: it writes its own size into the
 * caller's smaller slot. The library still exports those three functions for
 * programs built then, filling only the fields 0.3 had (a 0.4 program that
 * set kvf_session_params.adapter after kvf_session_default_params() must be
 * rebuilt for it to count); they are no longer declared here, and go when the
 * soname next changes. */

typedef struct kvf_client kvf_client;
typedef struct kvf_event kvf_event;
typedef uint64_t kvf_session; /* 0 is never a session */

/* ---- connecting ---------------------------------------------------------- */

typedef struct kvf_client_params {
  uint32_t struct_size;          /* sizeof(kvf_client_params) */
  const char* endpoint;          /* default "tcp://127.0.0.1:5555" */
  const char* client_name;       /* sent in Hello, shown in the server's log; default "kvframe-client" */
  int32_t connect_timeout_ms;    /* kvf_client_connect waits this long for the server's HelloReply;
                                    default 5000; 0: do not wait (connect lazily) */
  int32_t request_timeout_ms;    /* a request with no reply by then fails with KVF_ERR_TIMEOUT;
                                    default 30000; 0: never */
  /* CURVE encryption (all three, Z85 text of 40 characters, or all NULL). */
  const char* server_public_key;
  const char* client_public_key;
  const char* client_secret_key;
  /* A ZeroMQ context (from zmq_ctx_new) to make the client's sockets in; NULL
   * (default): the client's own. Share the context of a kvframe server running
   * in this process (kvframe::server::Server::zmq_context()) to reach its
   * inproc:// endpoint: inproc works only within one context. It must outlive
   * the client. */
  void* zmq_context;
} kvf_client_params;

/* The defaults into the first `size` bytes of *params (size: sizeof *params)
 * and struct_size = size. KVF_ERR_INVALID_ARGUMENT for NULL or a size below
 * 0.3's. */
KVF_API kvf_status kvf_client_params_init(kvf_client_params* params, size_t size);

/* Connects and (unless connect_timeout_ms is 0) waits for the server's
 * HelloReply. On failure *out is NULL and the last error says why
 * (KVF_ERR_TIMEOUT: no answer; KVF_ERR_CONNECT: a bad endpoint, or the server
 * refused the handshake or the Hello). With connect_timeout_ms 0 requests
 * wait for the HelloReply before they are sent. */
KVF_API kvf_status kvf_client_connect(const kvf_client_params* params, kvf_client** out);

/* Closes the sessions on the server (best effort, bounded by 500 ms), stops
 * the background thread and frees everything. Pending requests complete with
 * KVF_ERR_CLOSED (callbacks are called; queued events are freed). NULL is a
 * no-op. Never lingers: returns within a second even when the server is gone.
 * No other call may use the client during or after it. */
KVF_API void kvf_client_close(kvf_client* client);

/* The message of the calling thread's last failed call ("" if none). The
 * client argument is unused and may be NULL (kvf_client_connect failures). */
KVF_API const char* kvf_client_last_error(const kvf_client* client);

/* What the server said in its HelloReply (empty strings before it did). */
typedef struct kvf_server_info {
  uint32_t struct_size; /* set to sizeof(kvf_server_info) before the call */
  char server_version[32];
  char model[128];
  uint64_t max_message_bytes;
  uint32_t max_context;
  uint64_t instance_id;
  /* 0.4: */
  char adapters[256];        /* the adapters sessions may name, comma-separated (cut at 255 bytes) */
  char default_adapter[64];  /* the one a session naming none gets; "none": the base model */
} kvf_server_info;
KVF_API kvf_status kvf_client_server_info(kvf_client* client, kvf_server_info* out);

/* ---- sessions ------------------------------------------------------------ */

typedef enum kvf_mode { KVF_MODE_FULL = 0, KVF_MODE_PREFIX = 1, KVF_MODE_BLOCK = 2 } kvf_mode;

typedef struct kvf_session_params {
  uint32_t struct_size;       /* sizeof(kvf_session_params) */
  const char* game_id;        /* default "" */
  const char* rules_json;     /* json_blocker rules; NULL or "": the defaults */
  kvf_mode mode;              /* default KVF_MODE_BLOCK */
  const char* system_prompt;  /* NULL or "": the model's default */
  uint32_t context_tokens;    /* 0: the server's default */
  int32_t block_heads;        /* block mode's fidelity knob; -1 (default): the server's; 0: off */
  float blend_ratio;          /* another, 0 .. 1; -1 (default): the server's; 0: off */
  float block_temperature;    /* another, 0.25 .. 4; -1 (default): the server's; 1: off */
  /* 0.4: */
  const char* adapter;        /* the LoRA adapter the session's model runs with: a name the server
                                 loaded (kvframe-serve --adapter; kvf_server_info.adapters), "none"
                                 (the base model); NULL or "" (default): the server's default.
                                 Unknown: KVF_ERR_UNKNOWN_ADAPTER */
} kvf_session_params;

/* As kvf_client_params_init. */
KVF_API kvf_status kvf_session_params_init(kvf_session_params* params, size_t size);

/* Blocks until the server opened the session (or request_timeout_ms). */
KVF_API kvf_status kvf_session_open(kvf_client* client, const kvf_session_params* params, kvf_session* out);
/* Blocks until the server closed it (bounded by request_timeout_ms; at once
 * while the connection is down). The session's requests still pending
 * complete with KVF_ERR_CLOSED. The handle is invalid afterwards, whatever
 * the status. */
KVF_API kvf_status kvf_session_close(kvf_client* client, kvf_session session);

/* ---- frames and queries -------------------------------------------------- */

typedef enum kvf_frame_format {
  KVF_FRAME_WHOLE = 0,
  KVF_FRAME_MERGE_PATCH = 1, /* RFC 7386 */
  KVF_FRAME_JSON_PATCH = 2   /* RFC 6902 */
} kvf_frame_format;

typedef enum kvf_event_type {
  KVF_EVENT_FRAME_ACK = 0,
  KVF_EVENT_CHUNK = 1,   /* streamed text of a query */
  KVF_EVENT_RESULT = 2,  /* a query's answer */
  KVF_EVENT_ERROR = 3    /* a request failed: kvf_event_error_code / kvf_event_text */
} kvf_event_type;

/* Called on the client's background thread; `event` is valid during the call only. */
typedef void (*kvf_callback)(const kvf_event* event, void* user);

/* Sends a frame (copied; returns at once). frame_number must increase per
 * session. A patch (KVF_FRAME_MERGE_PATCH, KVF_FRAME_JSON_PATCH) is taken as
 * made against the frame sent before it on the session: the server applies it
 * only if it holds that frame, and otherwise answers KVF_ERR_STALE_BASE with
 * nothing changed, so after any refused frame send the next one whole. The
 * ack (or error) goes to `callback` if given; see the header comment for what
 * happens with a NULL callback. request_id may be NULL.
 * KVF_ERR_TOO_LARGE, with nothing sent, when json_len plus 1 KiB for the
 * message around it exceeds the server's max_message_bytes. */
KVF_API kvf_status kvf_send_frame(kvf_client* client, kvf_session session, uint64_t frame_number,
                                  kvf_frame_format format, const char* json, size_t json_len,
                                  kvf_callback callback, void* user, uint64_t* request_id);

typedef enum kvf_task_kind { KVF_TASK_TEXT = 0, KVF_TASK_NPC_ACTION = 1, KVF_TASK_COMMENTARY = 2 } kvf_task_kind;

typedef struct kvf_query_params {
  uint32_t struct_size;        /* sizeof(kvf_query_params) */
  kvf_task_kind kind;          /* default KVF_TASK_TEXT */
  const char* npc_id;          /* default "" */
  const char* instruction;     /* required */
  const char* output_schema;   /* KVF_TASK_NPC_ACTION: JSON Schema of the action; NULL: none */
  uint32_t max_tokens;         /* default 64 */
  float temperature;           /* default 0 (greedy) */
  int32_t top_k;               /* default 0 (off) */
  float top_p;                 /* default 1 */
  uint64_t seed;               /* default 0 */
  const char* const* stop;     /* stop strings, stop_count of them; may be NULL */
  size_t stop_count;
  int32_t stream;              /* nonzero: KVF_EVENT_CHUNK events before the result */
  uint64_t frame_number;       /* the frame this is about; 0: the latest sent */
  uint32_t deadline_ms;        /* 0: none (see protocol/kvframe.fbs Query) */
  uint64_t deadline_frame;     /* 0: none */
} kvf_query_params;

/* As kvf_client_params_init. */
KVF_API kvf_status kvf_query_params_init(kvf_query_params* params, size_t size);

/* Sends a query (returns at once). Chunks (when streaming) and then exactly
 * one Result or Error go to `callback`, or to the poll queue when it is NULL.
 * request_id may be NULL. */
KVF_API kvf_status kvf_query(kvf_client* client, kvf_session session, const kvf_query_params* params,
                             kvf_callback callback, void* user, uint64_t* request_id);

/* ---- events -------------------------------------------------------------- */

/* Takes the next queued event, waiting up to timeout_ms (0: do not wait,
 * -1: forever). KVF_ERR_EMPTY when there is none. Free it with kvf_event_free. */
KVF_API kvf_status kvf_poll(kvf_client* client, int32_t timeout_ms, kvf_event** out);
KVF_API void kvf_event_free(kvf_event* event);

KVF_API kvf_event_type kvf_event_type_of(const kvf_event* event);
KVF_API uint64_t kvf_event_request_id(const kvf_event* event);
KVF_API kvf_session kvf_event_session(const kvf_event* event);
KVF_API uint64_t kvf_event_frame_number(const kvf_event* event);
/* Chunk: the piece of text; Result: the whole text; Error: the message.
 * NUL-terminated UTF-8, owned by the event; *len (if not NULL) gets its length. */
KVF_API const char* kvf_event_text(const kvf_event* event, size_t* len);
/* Result of an npc_action query: the action JSON ("" otherwise). The same
 * action, parsed: kvf_event_action below. */
KVF_API const char* kvf_event_action_json(const kvf_event* event, size_t* len);
/* Result of a query with an output schema: the model's first choices as JSON
 * (protocol/kvframe.fbs Result.choices_json: each choice's text before it
 * and its likeliest allowed tokens with their probabilities); "" otherwise,
 * and from servers before it. */
KVF_API const char* kvf_event_choices_json(const kvf_event* event, size_t* len);
/* Error: the protocol's code (a kvf_status value; KVF_ERR_UNKNOWN for one this
 * client does not know); KVF_OK otherwise. */
KVF_API kvf_status kvf_event_error_code(const kvf_event* event);
/* 0.5. Error: the code as the server sent it, the same as kvf_event_error_code
 * except where that is KVF_ERR_UNKNOWN; 0 otherwise. */
KVF_API int32_t kvf_event_raw_error_code(const kvf_event* event);
/* Chunk: its sequence number and whether it ends a sentence. */
KVF_API uint32_t kvf_event_chunk_seq(const kvf_event* event);
KVF_API int32_t kvf_event_sentence_end(const kvf_event* event);
/* Frame ack: whether the frame was superseded by a newer one before it was applied. */
KVF_API int32_t kvf_event_superseded(const kvf_event* event);
/* Frame ack: what the frame changed, as text, against the frame applied before
 * it (docs/protocol.md, "FrameAck and Report"). All 0 when superseded. */
typedef struct kvf_frame_ack {
  uint32_t struct_size; /* set to sizeof(kvf_frame_ack) before the call */
  uint32_t blocks_total;
  uint32_t blocks_changed; /* changed + added + moved */
  uint32_t blocks_removed;
  int32_t superseded;
} kvf_frame_ack;
/* KVF_ERR_NOT_FOUND when the event is not a frame ack. */
KVF_API kvf_status kvf_event_frame_ack(const kvf_event* event, kvf_frame_ack* out);

/* Result: where the time went (the protocol's Report). Fields are added at
 * the end only; mirrors in other languages declare them in this order. */
typedef struct kvf_report {
  uint32_t struct_size; /* set to sizeof(kvf_report) before the call */
  double partition_ms, tokenize_ms, encode_ms, reposition_ms, query_prefill_ms;
  double first_token_ms, decode_ms, engine_ms, queue_ms, server_ms;
  double round_trip_ms; /* measured by the client: send to Result */
  int64_t blocks_total, blocks_reused, blocks_encoded, cache_hits, blocks_repositioned;
  int64_t tokens_encoded, context_tokens, query_tokens, generated_tokens;
  int32_t mode;        /* kvf_mode */
  int32_t stop_reason; /* 0 stop token, 1 max tokens, 2 context full, 3 stop string,
                          4 complete (the output schema's JSON value is whole) */
  double first_chunk_ms; /* to the first streamed chunk; 0 when nothing was streamed */
  double mask_ms;        /* picking tokens within the output schema */
  int32_t batch_size;    /* queries of the session decoded together with this one */
  int64_t tokens_encoded_superseded; /* encoded ahead, since the session's last query, for
                                        frames superseded before a query asked them */
} kvf_report;
KVF_API kvf_status kvf_event_report(const kvf_event* event, kvf_report* out);

/* A copy of `event` that outlives it (e.g. one given to a callback), freed
 * with kvf_event_free. */
KVF_API kvf_status kvf_event_clone(const kvf_event* event, kvf_event** out);

/* ---- the parsed action ---------------------------------------------------- */

/* A Result of an npc_action query carries its action twice: as JSON text
 * (kvf_event_action_json) and parsed (the protocol's FlexBuffers
 * Result.action), read here without a JSON parser:
 *
 *   kvf_value action, amount;
 *   int64_t chips;
 *   if (kvf_event_action(e, &action) == KVF_OK &&
 *       kvf_value_get(&action, "bet.amount", &amount) == KVF_OK &&
 *       kvf_value_as_int(&amount, &chips) == KVF_OK) { ... }
 *
 * A kvf_value is a small view, copied freely, that reads the event's bytes
 * in place: valid as long as its event is (in a callback, during the call;
 * kvf_event_clone keeps one longer). The bytes were verified when the reply
 * arrived: a corrupt action makes the whole reply a KVF_ERR_MALFORMED error
 * event. Failures return KVF_ERR_NOT_FOUND, KVF_ERR_TYPE_MISMATCH or
 * KVF_ERR_INVALID_ARGUMENT (a bad path, a NULL pointer) and set the last
 * error; successful reads allocate nothing. */
typedef enum kvf_value_type {
  KVF_VALUE_NONE = 0,   /* not a value: a zeroed kvf_value, or NULL */
  KVF_VALUE_NULL = 1,
  KVF_VALUE_BOOL = 2,
  KVF_VALUE_INT = 3,    /* a JSON integer within int64 */
  KVF_VALUE_DOUBLE = 4, /* any other number */
  KVF_VALUE_STRING = 5,
  KVF_VALUE_ARRAY = 6,
  KVF_VALUE_OBJECT = 7
} kvf_value_type;

typedef struct kvf_value {
  const void* priv_owner; /* private; NULL: no value */
  uint64_t priv_ref[2];   /* private */
} kvf_value;

/* The action's root (an object for schema-constrained actions).
 * KVF_ERR_NOT_FOUND: the event is not a Result carrying an action. */
KVF_API kvf_status kvf_event_action(const kvf_event* event, kvf_value* out);
KVF_API kvf_value_type kvf_value_type_of(const kvf_value* value);
/* The value at `path` below `value`: object keys joined by '.', array indices
 * in brackets ("amount", "target.id", "cards[1]", "moves[0].to", "[2]"; ""
 * is `value` itself). KVF_ERR_NOT_FOUND: a key or index that is not there;
 * KVF_ERR_TYPE_MISMATCH: a key into a non-object or an index into a
 * non-array. Keys holding '.' or '[' are reached with kvf_value_key_at. */
KVF_API kvf_status kvf_value_get(const kvf_value* value, const char* path, kvf_value* out);
/* The value itself, or KVF_ERR_TYPE_MISMATCH. as_int also takes a double
 * with an integral value within int64; as_double takes integers. */
KVF_API kvf_status kvf_value_as_bool(const kvf_value* value, int32_t* out);
KVF_API kvf_status kvf_value_as_int(const kvf_value* value, int64_t* out);
KVF_API kvf_status kvf_value_as_double(const kvf_value* value, double* out);
/* NUL-terminated UTF-8 owned by the event; *len (if not NULL) gets its length.
 * KVF_ERR_MALFORMED: a corrupt string that FlexBuffers' verifier let through. */
KVF_API kvf_status kvf_value_as_string(const kvf_value* value, const char** out, size_t* len);
/* Elements of an array, members of an object; 0 for anything else. */
KVF_API size_t kvf_value_size(const kvf_value* value);
/* An array's element, or an object's member value, by position. An object's
 * members are in key order (bytewise), not in the order the JSON had.
 * KVF_ERR_NOT_FOUND: index >= size. */
KVF_API kvf_status kvf_value_at(const kvf_value* value, size_t index, kvf_value* out);
/* An object's key by position (the key of kvf_value_at's member), owned by
 * the event like a string. */
KVF_API kvf_status kvf_value_key_at(const kvf_value* value, size_t index, const char** key, size_t* len);

/* ---- server statistics --------------------------------------------------- */

/* Asks the server for its Stats and returns them as one JSON object
 * (malloc'd, free with kvf_string_free). Blocks up to request_timeout_ms. */
KVF_API kvf_status kvf_server_stats_json(kvf_client* client, char** out_json);
KVF_API void kvf_string_free(char* text);

#ifdef __cplusplus
}
#endif

#endif /* KVFRAME_CLIENT_H */
