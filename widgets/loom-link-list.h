/*
 * LoomLinkList: the remote links of a network, one row each: "source →
 * destination", the merge mode (a drop-down), a delete button, and an error
 * icon whose tooltip says why a link is invalid (loom_net_check_link, or a
 * shape-inference problem naming both ends).
 *
 *   GtkWidget *links = loom_link_list_new();      // put it in a GtkScrolledWindow
 *   g_signal_connect(links, "link-selected", ...);          // (int index), -1: none
 *   g_signal_connect(links, "merge-changed", ...);          // (int index, int loom_merge)
 *   g_signal_connect(links, "link-delete-requested", ...);  // (int index); also the Delete key
 *   // after every change of the net:
 *   loom_link_list_set_net(LOOM_LINK_LIST(links), net, diags, n_diags);
 *
 * The list never changes the net: each edit is a signal for the undo stack.
 */
#pragma once

#include <gtk/gtk.h>
#include <loom/net.h>

G_BEGIN_DECLS

#define LOOM_TYPE_LINK_LIST (loom_link_list_get_type())
G_DECLARE_FINAL_TYPE(LoomLinkList, loom_link_list, LOOM, LINK_LIST, GtkWidget)

GtkWidget *loom_link_list_new(void);

/* Rebuilds the rows from @net (borrowed for the call only; NULL empties the
 * list); @diags are the problems of the last shape inference. The selection
 * is kept when its index still exists. */
void loom_link_list_set_net(LoomLinkList *self, const loom_net *net, const loom_diag *diags, int n_diags);

/* The "selected" property: the selected link's index, or -1. Setting it does
 * not emit "link-selected". */
int loom_link_list_get_selected(LoomLinkList *self);
void loom_link_list_set_selected(LoomLinkList *self, int index);

/* The number of rows, and why link @index is invalid (NULL if it is valid). */
int loom_link_list_get_n_links(LoomLinkList *self);
const char *loom_link_list_get_link_error(LoomLinkList *self, int index);

G_END_DECLS
