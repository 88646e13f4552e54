/*
 * Internal to the engine: the multi-head losses' label check, shared by
 * loss.c and the device's loss (engine/gpu/gpu-train-loss.c), so that both
 * refuse the same labels with the same message.
 */
#pragma once
#include <stdint.h>

#include "loom/loss.h"

/* The labels (batch × heads) of a multi-head loss whose outputs have
 * `width` values a sample: the active ones (mask NULL: all) must lie in
 * [0, width / heads). *active: how many heads are active. */
int loss_check_head_labels(const loom_loss_spec *spec, const int32_t *labels, const uint8_t *mask, int64_t batch,
                           int64_t width, int64_t *active, loom_error *err);
