/* Remote links between slots: validation, adding, removing. */
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "net/net-internal.h"

static const char *const merge_names[] = {"replace", "add", "concat"};

LOOM_API const char *loom_merge_name(loom_merge m) {
  return (unsigned)m < sizeof merge_names / sizeof merge_names[0] ? merge_names[m] : NULL;
}

LOOM_API int loom_merge_from_name(const char *name, loom_merge *out, loom_error *err) {
  for (int i = 0; i < 3; i++)
    if (name && strcmp(name, merge_names[i]) == 0) {
      *out = (loom_merge)i;
      return LOOM_OK;
    }
  return loom_error_set(err, LOOM_ERR_INVALID, _("unknown merge “%s” (expected replace, add or concat)"),
                        name ? name : "(null)");
}

LOOM_API int loom_net_check_link(const loom_net *net, const loom_link *k, loom_error *err) {
  char a[48], b[48];
  if (!net || !k) return loom_error_set(err, LOOM_ERR_INVALID, _("no network or link given"));
  loom_coord_format(k->src, a, sizeof a);
  loom_coord_format(k->dst, b, sizeof b);
  int64_t fs = net_flat(net, k->src), fd = net_flat(net, k->dst);
  if (fs < 0)
    return loom_error_set(err, LOOM_ERR_RANGE, _("link %s → %s: the source %s is outside the grid"), a, b, a);
  if (fd < 0)
    return loom_error_set(err, LOOM_ERR_RANGE, _("link %s → %s: the destination %s is outside the grid"), a, b, b);
  if (!loom_merge_name(k->merge))
    return loom_error_set(err, LOOM_ERR_INVALID, _("link %s → %s: unknown merge mode %d"), a, b, (int)k->merge);
  if (!net->slots[fs])
    return loom_error_set(err, LOOM_ERR_INVALID, _("link %s → %s: the source slot %s is empty"), a, b, a);
  if (!net->slots[fd])
    return loom_error_set(err, LOOM_ERR_INVALID, _("link %s → %s: the destination slot %s is empty"), a, b, b);
  if (fs == fd) return loom_error_set(err, LOOM_ERR_INVALID, _("link %s → %s: a slot cannot link to itself"), a, b);
  if (fs > fd && net->execution != LOOM_EXEC_SYSTOLIC)
    return loom_error_set(err, LOOM_ERR_INVALID,
                          _("link %s → %s points backwards (the source comes after the destination); feedback links "
                            "need systolic execution"),
                          a, b);
  for (int i = 0; i < net->n_links; i++) {
    const loom_link *o = &net->links[i];
    /* A link already in the network (loom_net_link's pointer) is judged
     * against the others: it is not a duplicate of itself. */
    if (o == k) continue;
    if (net_flat(net, o->src) == fs && net_flat(net, o->dst) == fd)
      return loom_error_set(err, LOOM_ERR_INVALID, _("link %s → %s already exists (merge “%s”)"), a, b,
                            loom_merge_name(o->merge));
  }
  return LOOM_OK;
}

/* Links per network: far more than any grid a person edits. */
#define NET_MAX_LINKS 1000000

LOOM_API int loom_net_add_link(loom_net *net, const loom_link *k, loom_error *err) {
  int rc = loom_net_check_link(net, k, err);
  if (rc) return rc;
  if (net->n_links >= NET_MAX_LINKS)
    return loom_error_set(err, LOOM_ERR_RANGE, _("the network already has %d links, the most allowed"), net->n_links);
  if (net->n_links == net->links_cap) {
    int cap = net->links_cap ? net->links_cap * 2 : 8;
    loom_link *grown = realloc(net->links, (size_t)cap * sizeof *grown);
    if (!grown) return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory adding a link"));
    net->links = grown;
    net->links_cap = cap;
  }
  net->links[net->n_links++] = *k;
  net_invalidate(net);
  return LOOM_OK;
}

static const char *const execution_names[] = {"feed-forward", "systolic"};

LOOM_API const char *loom_execution_name(loom_execution mode) {
  return (unsigned)mode < 2 ? execution_names[mode] : NULL;
}

LOOM_API int loom_execution_from_name(const char *name, loom_execution *out, loom_error *err) {
  for (int i = 0; i < 2; i++)
    if (name && strcmp(name, execution_names[i]) == 0) {
      *out = (loom_execution)i;
      return LOOM_OK;
    }
  return loom_error_set(err, LOOM_ERR_INVALID, _("unknown execution “%s” (expected feed-forward or systolic)"),
                        name ? name : "(null)");
}

LOOM_API int loom_net_set_execution(loom_net *net, loom_execution mode, loom_error *err) {
  if (!net) return loom_error_set(err, LOOM_ERR_INVALID, _("no network given"));
  if (!loom_execution_name(mode))
    return loom_error_set(err, LOOM_ERR_INVALID, _("unknown execution mode %d"), (int)mode);
  if (mode == net->execution) return LOOM_OK;
  for (int i = 0; mode == LOOM_EXEC_FEED_FORWARD && i < net->n_links; i++) {
    const loom_link *k = &net->links[i];
    if (net_flat(net, k->src) >= net_flat(net, k->dst)) {
      char a[48], b[48];
      return loom_error_set(err, LOOM_ERR_INVALID,
                            _("link %s → %s points backwards (the source comes after the destination); feedback links "
                              "need systolic execution"),
                            loom_coord_format(k->src, a, sizeof a), loom_coord_format(k->dst, b, sizeof b));
    }
  }
  net->execution = mode;
  net_invalidate(net);
  return LOOM_OK;
}

LOOM_API loom_execution loom_net_execution(const loom_net *net) {
  return net ? net->execution : LOOM_EXEC_FEED_FORWARD;
}

LOOM_API int loom_net_remove_link(loom_net *net, int index, loom_error *err) {
  if (!net) return loom_error_set(err, LOOM_ERR_INVALID, _("no network given"));
  if (index < 0 || index >= net->n_links)
    return loom_error_set(err, LOOM_ERR_RANGE, _("there is no link number %d (the network has %d)"), index,
                          net->n_links);
  memmove(net->links + index, net->links + index + 1, (size_t)(net->n_links - index - 1) * sizeof *net->links);
  net->n_links--;
  net_invalidate(net);
  return LOOM_OK;
}

LOOM_API int loom_net_n_links(const loom_net *net) { return net ? net->n_links : 0; }

LOOM_API const loom_link *loom_net_link(const loom_net *net, int index) {
  return net && index >= 0 && index < net->n_links ? &net->links[index] : NULL;
}
