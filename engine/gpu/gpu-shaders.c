/*
 * The compute kernels' SPIR-V, compiled from the .comp files in shaders/ by glslc at build
 * time (engine/gpu/meson.build) and embedded as arrays of words.
 */
#include "gpu/gpu-internal.h"

static const uint32_t spv_gemm_f32[] =
#include "gemm-f32.spv.inc"
  ;
static const uint32_t spv_gemm_packed[] =
#include "gemm-packed.spv.inc"
  ;
static const uint32_t spv_gemv_f32[] =
#include "gemv-f32.spv.inc"
  ;
static const uint32_t spv_gemv_packed[] =
#include "gemv-packed.spv.inc"
  ;
static const uint32_t spv_act[] =
#include "act.spv.inc"
  ;
static const uint32_t spv_softmax[] =
#include "softmax.spv.inc"
  ;
static const uint32_t spv_colsum[] =
#include "colsum.spv.inc"
  ;
static const uint32_t spv_sgd[] =
#include "sgd.spv.inc"
  ;
static const uint32_t spv_adam[] =
#include "adam.spv.inc"
  ;

static const uint32_t spv_loss[] =
#include "loss.spv.inc"
  ;

static const uint32_t spv_norm[] =
#include "norm.spv.inc"
  ;

static const uint32_t spv_embed[] =
#include "embed.spv.inc"
  ;

static const uint32_t spv_merge[] =
#include "merge.spv.inc"
  ;

static const uint32_t spv_rowdot_f32[] =
#include "rowdot-f32.spv.inc"
  ;
static const uint32_t spv_rowdot_packed[] =
#include "rowdot-packed.spv.inc"
  ;

static const uint32_t spv_conv[] =
#include "conv.spv.inc"
  ;

static const uint32_t spv_rmsprop[] =
#include "rmsprop.spv.inc"
  ;

static const uint32_t spv_clip[] =
#include "clip.spv.inc"
  ;

static const uint32_t spv_gemm_tile[] =
#include "gemm-tile.spv.inc"
  ;

static const uint32_t spv_sparsemax[] =
#include "sparsemax.spv.inc"
  ;

static const uint32_t spv_gumbel[] =
#include "gumbel.spv.inc"
  ;

static const uint32_t spv_hsoftmax[] =
#include "hsoftmax.spv.inc"
  ;

static const uint32_t spv_mix[] =
#include "mix.spv.inc"
  ;

static const uint32_t spv_gemm_wide[] =
#include "gemm-wide.spv.inc"
  ;
static const uint32_t spv_gemv_wide[] =
#include "gemv-wide.spv.inc"
  ;
static const uint32_t spv_rowdot_wide[] =
#include "rowdot-wide.spv.inc"
  ;
static const uint32_t spv_embed_wide[] =
#include "embed-wide.spv.inc"
  ;
static const uint32_t spv_conv_wide[] =
#include "conv-wide.spv.inc"
  ;

#define KERNEL(ident, array, bindings) [ident] = {#array, array, sizeof array, bindings}

const gpu_kernel_info gpu_kernels[GPU_K_COUNT] = {
  KERNEL(GPU_K_GEMM_F32, spv_gemm_f32, 5),
  KERNEL(GPU_K_GEMM_PACKED, spv_gemm_packed, 5),
  KERNEL(GPU_K_GEMV_F32, spv_gemv_f32, 5),
  KERNEL(GPU_K_GEMV_PACKED, spv_gemv_packed, 5),
  KERNEL(GPU_K_ROWDOT_F32, spv_rowdot_f32, 5),
  KERNEL(GPU_K_ROWDOT_PACKED, spv_rowdot_packed, 5),
  KERNEL(GPU_K_ACT, spv_act, 3),
  KERNEL(GPU_K_SOFTMAX, spv_softmax, 4),
  KERNEL(GPU_K_COLSUM, spv_colsum, 2),
  KERNEL(GPU_K_SGD, spv_sgd, 3),
  KERNEL(GPU_K_ADAM, spv_adam, 5),
  KERNEL(GPU_K_LOSS, spv_loss, 3),
  KERNEL(GPU_K_NORM, spv_norm, 7),
  KERNEL(GPU_K_EMBED, spv_embed, 5),
  KERNEL(GPU_K_MERGE, spv_merge, 2),
  KERNEL(GPU_K_CONV, spv_conv, 6),
  KERNEL(GPU_K_RMSPROP, spv_rmsprop, 5),
  KERNEL(GPU_K_CLIP, spv_clip, 3),
  KERNEL(GPU_K_GEMM_TILE, spv_gemm_tile, 5),
  KERNEL(GPU_K_SPARSEMAX, spv_sparsemax, 3),
  KERNEL(GPU_K_GUMBEL, spv_gumbel, 4),
  KERNEL(GPU_K_HSOFTMAX, spv_hsoftmax, 5),
  KERNEL(GPU_K_MIX, spv_mix, 4),
  KERNEL(GPU_K_GEMM_WIDE, spv_gemm_wide, 5),
  KERNEL(GPU_K_GEMV_WIDE, spv_gemv_wide, 5),
  KERNEL(GPU_K_ROWDOT_WIDE, spv_rowdot_wide, 5),
  KERNEL(GPU_K_EMBED_WIDE, spv_embed_wide, 5),
  KERNEL(GPU_K_CONV_WIDE, spv_conv_wide, 6),
};
