/* A program built against the 0.3 header and run against this library:
 * kvframe_client_0.3.h is include/kvframe/client/kvframe_client.h as commit
 * 2df1596 ("C ABI 0.3") left it, unchanged. It follows that header's own
 * example, kvf_*_default_params() included, against a server at ENDPOINT
 * (ClientAbi.AProgramBuiltAgainst03Runs starts it beside a scripted server).
 *
 *   caller_0_3 ENDPOINT      exit 0: every step did what the 0.3 header says
 */
#include <stdio.h>
#include <string.h>

#include "kvframe_client_0.3.h"

static int fail(const char* what, kvf_status status) {
  fprintf(stderr, "caller_0_3: %s failed: %s (%s)\n", what, kvf_status_name(status), kvf_client_last_error(NULL));
  return 1;
}

/* The bytes a by-value default came in, as the library counted them. 0.4
 * returned a 64-byte kvf_session_params into 0.3's 56-byte slot, said so
 * here, and then read 64 bytes of the caller's struct in kvf_session_open. */
static int wrong_size(const char* type, uint32_t got, size_t mine) {
  fprintf(stderr, "caller_0_3: the library returned %u bytes of %s into this program's %zu\n", got, type, mine);
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: caller_0_3 ENDPOINT\n");
    return 2;
  }
  kvf_client_params params = kvf_client_default_params();
  if (params.struct_size != sizeof params) return wrong_size("kvf_client_params", params.struct_size, sizeof params);
  params.endpoint = argv[1];
  kvf_client* client = NULL;
  kvf_status status = kvf_client_connect(&params, &client);
  if (status != KVF_OK) return fail("kvf_client_connect", status);

  kvf_session_params sp = kvf_session_default_params();
  if (sp.struct_size != sizeof sp) return wrong_size("kvf_session_params", sp.struct_size, sizeof sp);
  sp.game_id = "holdem";
  kvf_session session = 0;
  status = kvf_session_open(client, &sp, &session);
  if (status != KVF_OK) return fail("kvf_session_open", status);

  const char* json = "{\"p3\":{\"chips\":40}}";
  status = kvf_send_frame(client, session, 1, KVF_FRAME_WHOLE, json, strlen(json), NULL, NULL, NULL);
  if (status != KVF_OK) return fail("kvf_send_frame", status);
  kvf_query_params q = kvf_query_default_params();
  if (q.struct_size != sizeof q) return wrong_size("kvf_query_params", q.struct_size, sizeof q);
  q.instruction = "What does p3 do?";
  uint64_t request = 0;
  status = kvf_query(client, session, &q, NULL, NULL, &request);
  if (status != KVF_OK) return fail("kvf_query", status);

  kvf_event* e = NULL;
  status = kvf_poll(client, 10000, &e);
  if (status != KVF_OK) return fail("kvf_poll", status);
  const int answered = kvf_event_type_of(e) == KVF_EVENT_RESULT && kvf_event_request_id(e) == request;
  if (!answered) fprintf(stderr, "caller_0_3: not the query's result: %s\n", kvf_event_text(e, NULL));
  kvf_event_free(e);
  kvf_session_close(client, session);
  kvf_client_close(client);
  return answered ? 0 : 1;
}
