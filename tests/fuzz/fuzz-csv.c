/* libFuzzer: the CSV data set reader and the import preview. */
#include <stdlib.h>
#include <unistd.h>

#include "fuzz-common.h"
#include "loom/loom.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[64];
  int fd = fuzz_memfd(data, size, path, sizeof path);
  if (fd < 0) return 0;
  loom_error err = {0};
  loom_csv_options opts = loom_csv_options_default();
  loom_dataset *ds = loom_dataset_load_csv(path, &opts, &err);
  if (ds) loom_dataset_free(ds);
  else if (!err.message[0]) abort();
  loom_csv_preview preview;
  if (loom_csv_preview_read(path, &opts, 8, &preview, &err) == LOOM_OK) loom_csv_preview_clear(&preview);
  else if (!err.message[0]) abort();
  close(fd);
  return 0;
}
