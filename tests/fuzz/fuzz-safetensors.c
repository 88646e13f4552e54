/* libFuzzer: the safetensors reader (listing any file) and the model loader
 * on top of it, and the writer on whatever loads. */
#include <stdlib.h>
#include <string.h>

#include "loom/loom.h"
#include "loom/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  loom_error err = {0};
  loom_safetensors *st = NULL;
  if (loom_safetensors_open_data(data, size, "fuzz.safetensors", &st, &err) == LOOM_OK) {
    /* every listed tensor lies inside the input */
    for (int64_t i = 0; i < loom_safetensors_n_tensors(st); i++) {
      const loom_st_tensor *t = loom_safetensors_tensor(st, i);
      const uint8_t *p = loom_safetensors_data(st, t);
      if (p < data || p + (t->end - t->begin) > data + size) abort();
      if (t->end > t->begin) (void)*(volatile const uint8_t *)(p + (t->end - t->begin) - 1);
    }
    loom_safetensors_close(st);
  } else if (st || !err.message[0]) {
    abort();
  }
  loom_net *net = NULL;
  loom_model_extras extras = {0};
  if (loom_model_load_safetensors_data(data, size, "fuzz.safetensors", LOOM_MODEL_STRICT, &net, &extras, &err) ==
      LOOM_OK) {
    size_t len;
    free(loom_model_to_safetensors(net, &extras, &len, &err));
    loom_net_free(net);
    loom_model_extras_clear(&extras);
  } else if (net || !err.message[0]) {
    abort();
  }
  return 0;
}
