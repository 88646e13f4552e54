/*
 * Internal to train-state.c and train-state-import.c: the constants of the
 * training-state blob (docs/file-format.md "Training state").
 */
#pragma once
#include <stddef.h>
#include <stdint.h>

#define STATE_MAGIC "LOOMTRST"
#define STATE_VERSION 1u
#define STATE_HEADER 32u

/* FNV-1a (64 bits) of the payload, stored in the header. */
uint64_t train_state_checksum(const uint8_t *p, size_t n);

/* n little-endian bytes as an unsigned value. */
static inline uint64_t train_state_get_le(const uint8_t *src, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; i++) v |= (uint64_t)src[i] << (8 * i);
  return v;
}
