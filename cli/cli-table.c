#include "cli-table.h"

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>

void cli_table_fit(int *widths, const char *const *titles, int n) {
  for (int c = 0; c < n; c++) {
    int need = (int)g_utf8_strlen(titles[c], -1);
    if (need > abs(widths[c])) widths[c] = widths[c] < 0 ? -need : need;
  }
}

void cli_table_row(const char *indent, const char *const *cells, const int *widths, int n) {
  fputs(indent, stdout);
  for (int c = 0; c < n; c++) {
    int pad = abs(widths[c]) - (int)g_utf8_strlen(cells[c], -1);
    if (c) putchar(' ');
    for (int k = 0; widths[c] > 0 && k < pad; k++) putchar(' ');
    fputs(cells[c], stdout);
    /* The last cell needs no trailing spaces. */
    for (int k = 0; widths[c] < 0 && c + 1 < n && k < pad; k++) putchar(' ');
  }
  putchar('\n');
}
