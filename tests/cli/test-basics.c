#include <string.h>

#include "cli-harness.h"

static void test_version(void) {
  const char *argv[] = {"--version", NULL};
  CliResult r = cli_run(NULL, NULL, argv);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_true(g_str_has_prefix(r.out, "loom "));
  g_assert_nonnull(strstr(r.out, "engine "));
  cli_result_clear(&r);
}

static void test_help_lists_every_command(void) {
  const char *argv[] = {"--help", NULL};
  CliResult r = cli_run(NULL, NULL, argv);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_nonnull(strstr(r.out, "Usage: loom"));
  g_assert_nonnull(strstr(r.out, "Commands:"));
  /* Each command line is "  NAME  summary"; version always exists. */
  g_assert_nonnull(strstr(r.out, "\n  version "));
  cli_result_clear(&r);
}

static void test_unknown_command(void) {
  const char *argv[] = {"frobnicate", NULL};
  CliResult r = cli_run(NULL, NULL, argv);
  g_assert_cmpint(r.status, ==, 2);
  g_assert_nonnull(strstr(r.err, "unknown command 'frobnicate'"));
  g_assert_nonnull(strstr(r.err, "loom --help"));
  g_assert_cmpstr(r.out, ==, "");
  cli_result_clear(&r);
}

static void test_unknown_option(void) {
  const char *argv[] = {"--frobnicate", NULL};
  CliResult r = cli_run(NULL, NULL, argv);
  g_assert_cmpint(r.status, ==, 2);
  g_assert_nonnull(strstr(r.err, "unknown option '--frobnicate'"));
  cli_result_clear(&r);
}

static void test_no_arguments(void) {
  const char *argv[] = {NULL};
  CliResult r = cli_run(NULL, NULL, argv);
  g_assert_cmpint(r.status, ==, 2);
  g_assert_nonnull(strstr(r.err, "Usage: loom"));
  cli_result_clear(&r);
}

static void test_command_help(void) {
  const char *argv[] = {"version", "--help", NULL};
  CliResult r = cli_run(NULL, NULL, argv);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_nonnull(strstr(r.out, "Usage: loom version"));
  cli_result_clear(&r);
}

static void test_german_help(void) {
  const char *env[] = {"LANGUAGE=de", "LANG=C.UTF-8", "LC_ALL=", NULL};
  const char *argv[] = {"--help", NULL};
  CliResult r = cli_run(NULL, env, argv);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_nonnull(strstr(r.out, "Aufruf: loom"));
  g_assert_nonnull(strstr(r.out, "Befehle:"));
  g_assert_null(strstr(r.out, "Commands:"));
  cli_result_clear(&r);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/cli/version", test_version);
  g_test_add_func("/cli/help-lists-commands", test_help_lists_every_command);
  g_test_add_func("/cli/unknown-command", test_unknown_command);
  g_test_add_func("/cli/unknown-option", test_unknown_option);
  g_test_add_func("/cli/no-arguments", test_no_arguments);
  g_test_add_func("/cli/command-help", test_command_help);
  g_test_add_func("/cli/german-help", test_german_help);
  return g_test_run();
}
