/*
 * Plain-text tables for the commands' reports. Widths count characters, not
 * bytes: a translated title may hold multi-byte characters, which printf's
 * field widths would miscount and so shift every column after it.
 */
#pragma once

/* Widens each column to its title where the title is longer (keeping the
 * sign: negative widths mean left-aligned). */
void cli_table_fit(int *widths, const char *const *titles, int n);
/* One line: an indent, then each cell padded with spaces to its width,
 * right-aligned unless the width is negative, cells separated by one space. */
void cli_table_row(const char *indent, const char *const *cells, const int *widths, int n);
