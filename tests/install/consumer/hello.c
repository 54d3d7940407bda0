/* The smallest real exchange through an installed libkvframe_client, in C:
 * connect, open a session, send one frame, ask about it, poll the answer.
 * Built by tests/install/run_install_test.sh with find_package(kvframe)
 * (consumer/CMakeLists.txt) and again with `pkg-config --cflags --libs kvframe`.
 *
 *   hello_c ENDPOINT      exit 0: the server answered about frame 1
 */
#include <kvframe/client/kvframe_client.h>

#include <stdio.h>
#include <string.h>

static int fail(const char* what, kvf_status status) {
  fprintf(stderr, "hello_c: %s failed: %s (%s)\n", what, kvf_status_name(status), kvf_client_last_error(NULL));
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: hello_c ENDPOINT\n");
    return 2;
  }
  /* The library that was loaded must be the one the header describes. */
  int32_t major = 0, minor = 0, patch = 0;
  kvf_version(&major, &minor, &patch);
  if (major != KVF_VERSION_MAJOR || minor != KVF_VERSION_MINOR) {
    fprintf(stderr, "hello_c: header %d.%d, library %d.%d\n", KVF_VERSION_MAJOR, KVF_VERSION_MINOR, major, minor);
    return 1;
  }

  kvf_client_params params;
  kvf_client_params_init(&params, sizeof params);
  params.endpoint = argv[1];
  params.client_name = "hello_c";
  params.connect_timeout_ms = 30000;
  params.request_timeout_ms = 120000;
  kvf_client* client = NULL;
  kvf_status status = kvf_client_connect(&params, &client);
  if (status != KVF_OK) return fail("kvf_client_connect", status);

  kvf_session_params sp;
  kvf_session_params_init(&sp, sizeof sp);
  sp.game_id = "install-check";
  kvf_session session = 0;
  status = kvf_session_open(client, &sp, &session);
  if (status != KVF_OK) return fail("kvf_session_open", status);

  const char* frame = "{\"npc\":{\"name\":\"Bram\",\"hp\":3},\"wolf\":{\"hp\":9}}";
  status = kvf_send_frame(client, session, 1, KVF_FRAME_WHOLE, frame, strlen(frame), NULL, NULL, NULL);
  if (status != KVF_OK) return fail("kvf_send_frame", status);

  kvf_query_params q;
  kvf_query_params_init(&q, sizeof q);
  q.instruction = "What does Bram do?";
  q.max_tokens = 4;
  uint64_t request = 0;
  status = kvf_query(client, session, &q, NULL, NULL, &request);
  if (status != KVF_OK) return fail("kvf_query", status);

  /* With no callbacks, an error about the frame and the query's result both
   * come through the poll queue; the result says which frame it answered. */
  int ok = 0;
  for (;;) {
    kvf_event* e = NULL;
    status = kvf_poll(client, 120000, &e);
    if (status != KVF_OK) return fail("kvf_poll", status);
    const kvf_event_type type = kvf_event_type_of(e);
    if (type == KVF_EVENT_ERROR) {
      fprintf(stderr, "hello_c: error event: %s: %s\n", kvf_status_name(kvf_event_error_code(e)),
              kvf_event_text(e, NULL));
    } else if (type == KVF_EVENT_RESULT) {
      ok = kvf_event_request_id(e) == request && kvf_event_frame_number(e) == 1;
      printf("hello_c: frame %llu answered: \"%s\"\n", (unsigned long long)kvf_event_frame_number(e),
             kvf_event_text(e, NULL));
    }
    kvf_event_free(e);
    if (type == KVF_EVENT_ERROR || type == KVF_EVENT_RESULT) break;
  }
  kvf_session_close(client, session);
  kvf_client_close(client);
  return ok ? 0 : 1;
}
