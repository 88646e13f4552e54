/*
 * The plan accessors of net-plan.h: code outside engine/net/ reads the
 * execution plan through them and never sees struct loom_net.
 */
#include "net/net-internal.h"

int net_plan_ensure(loom_net *net, loom_error *err) { return net_ensure_plan(net, err); }
int net_plan_n_nodes(const loom_net *net) { return net->n_nodes; }
const net_node *net_plan_nodes(const loom_net *net) { return net->nodes; }
int64_t net_plan_batch(const loom_net *net) { return net->batch; }
