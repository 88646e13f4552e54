/*
 * Atomic saving under SIGKILL: 100 times, a child replaces a JSON and a
 * safetensors model file with another network and is killed at a random
 * moment of it (uniform over the time a whole save takes). Every time, each
 * file must be exactly the old or the new complete version (never a mix,
 * never cut short) and load.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "loom/loom.h"
#include "loom/safetensors.h"

/* A network big enough that one save takes a while (a few hundred kilobytes). */
static loom_net *make_net(uint64_t seed) {
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 1, 2, 1, &err);
  g_assert_cmpint(loom_net_set_input_shape(net, &(loom_shape){.rank = 1, .d = {160}}, &err), ==, 0);
  for (int x = 0; x < 2; x++) {
    loom_layer *d = loom_layer_new_by_name("dense", &err);
    loom_layer_set_int(d, "in_features", 160, &err);
    loom_layer_set_int(d, "out_features", 160, &err);
    g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, x, 0}, d, &err), ==, 0);
  }
  loom_diag *diags = NULL;
  g_assert_cmpint(loom_net_infer_shapes(net, seed, &diags), ==, 0);
  free(diags);
  return net;
}

static bool same_file(const char *path, GBytes *want) {
  char *data;
  gsize len;
  if (!g_file_get_contents(path, &data, &len, NULL)) return false;
  bool same = len == g_bytes_get_size(want) && memcmp(data, g_bytes_get_data(want, NULL), len) == 0;
  g_free(data);
  return same;
}

static void test_kill_while_saving(void) {
  char *dir = g_dir_make_tmp("loom-kill-XXXXXX", NULL);
  char *json = g_build_filename(dir, "m.loom.json", NULL), *st = g_build_filename(dir, "m.safetensors", NULL);
  loom_net *nets[2] = {make_net(1), make_net(2)};
  GBytes *json_bytes[2], *st_bytes[2];
  loom_error err = {0};
  for (int i = 0; i < 2; i++) {
    size_t len;
    char *t = loom_model_to_json(nets[i], &len, &err);
    json_bytes[i] = g_bytes_new_take(t, len);
    uint8_t *s = loom_model_to_safetensors(nets[i], NULL, &len, &err);
    st_bytes[i] = g_bytes_new_take(s, len);
  }
  /* How long a child takes to save both files, fork to exit. */
  gint64 child_time = G_MAXINT64;
  for (int k = 0; k < 3; k++) {
    gint64 t0 = g_get_monotonic_time();
    pid_t pid = fork();
    g_assert_cmpint(pid, >=, 0);
    if (pid == 0) {
      loom_error e = {0};
      _exit(loom_model_save(nets[1], json, &e) || loom_model_save_safetensors(nets[1], NULL, st, &e));
    }
    int status;
    g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
    g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    child_time = MIN(child_time, g_get_monotonic_time() - t0);
  }
  g_test_message("a child saves both files in %lld µs", (long long)child_time);

  GRand *rng = g_rand_new_with_seed(12);
  int ends[2][2] = {{0}};
  for (int k = 0; k < 100; k++) {
    /* start from version A, then a child writes B and is killed somewhere in it */
    g_assert_cmpint(loom_model_save(nets[0], json, &err), ==, 0);
    g_assert_cmpint(loom_model_save_safetensors(nets[0], NULL, st, &err), ==, 0);
    pid_t pid = fork();
    g_assert_cmpint(pid, >=, 0);
    if (pid == 0) {
      loom_error e = {0};
      _exit(loom_model_save(nets[1], json, &e) || loom_model_save_safetensors(nets[1], NULL, st, &e));
    }
    g_usleep((gulong)g_rand_int_range(rng, 0, (gint32)MIN(child_time, 200000) + 1));
    g_assert_cmpint(kill(pid, SIGKILL), ==, 0);
    int status;
    g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
    const char *paths[2] = {json, st};
    GBytes **versions[2] = {json_bytes, st_bytes};
    for (int f = 0; f < 2; f++) {
      int which = same_file(paths[f], versions[f][0]) ? 0 : same_file(paths[f], versions[f][1]) ? 1 : -1;
      if (which < 0) g_error("kill %d: %s is neither complete version", k, paths[f]);
      ends[f][which]++;
      loom_net *back = NULL;
      if (loom_model_load(paths[f], LOOM_MODEL_STRICT, &back, &err)) g_error("kill %d: %s", k, err.message);
      loom_net_free(back);
    }
    /* a killed save leaves its temporary file behind; remove them */
    GDir *d = g_dir_open(dir, 0, NULL);
    const char *name;
    while ((name = g_dir_read_name(d)))
      if (strstr(name, ".tmp-")) {
        char *p = g_build_filename(dir, name, NULL);
        g_unlink(p);
        g_free(p);
      }
    g_dir_close(d);
  }
  g_test_message("JSON ended as the old version %d and the new %d times; safetensors %d and %d", ends[0][0], ends[0][1],
                 ends[1][0], ends[1][1]);
  g_rand_free(rng);
  for (int i = 0; i < 2; i++) {
    g_bytes_unref(json_bytes[i]);
    g_bytes_unref(st_bytes[i]);
    loom_net_free(nets[i]);
  }
  g_unlink(json);
  g_unlink(st);
  g_rmdir(dir);
  g_free(json);
  g_free(st);
  g_free(dir);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/io/save-kill", test_kill_while_saving);
  return g_test_run();
}
