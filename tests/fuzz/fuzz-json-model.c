/* libFuzzer: the JSON model loader (strict and lenient), and the writer on
 * whatever loads. */
#include <stdlib.h>

#include "loom/loom.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  for (unsigned flags = 0; flags < 2; flags++) {
    loom_error err = {0};
    loom_net *net = NULL;
    loom_model_extras extras = {0};
    if (loom_model_load_data_ex((const char *)data, size, "fuzz.json", flags, &net, &extras, &err) == LOOM_OK) {
      size_t len;
      free(loom_model_to_json_ex(net, &extras, &len, &err));
      loom_net_free(net);
      loom_model_extras_clear(&extras);
    } else if (net || !err.message[0]) {
      abort(); /* a failure must say why and return nothing */
    }
  }
  return 0;
}
