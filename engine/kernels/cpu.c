/*
 * CPU feature detection and the choice of the kernel table (see cpu.h). The
 * tables are built once, under pthread_once; afterwards a call costs one
 * atomic load.
 */
#include "kernels/cpu.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(LOOM_KERNELS_X86)
#include <cpuid.h>
#endif
#if defined(LOOM_KERNELS_X86) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

static loom_cpu_features features;
static loom_kernels tables[LOOM_KERNELS_LEVEL_COUNT];
static bool available[LOOM_KERNELS_LEVEL_COUNT];
static _Atomic(const loom_kernels *) current;
static pthread_once_t once = PTHREAD_ONCE_INIT;

#if defined(LOOM_KERNELS_X86)
/* XCR0: which register states the OS saves on a context switch. A CPU can
 * have AVX-512 that the OS does not enable; then using it faults. */
static uint64_t read_xcr0(void) {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}

/* Linux hands out the tile data state (8 KiB more per thread to save) only
 * to a process that asks for it; before that, a tile instruction faults.
 * Asked once, at the first use of any kernel. */
static bool amx_permitted(void) {
#if defined(__linux__) && defined(SYS_arch_prctl)
  enum { ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18 };
  return syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
#else
  return false;
#endif
}

static void detect(loom_cpu_features *f) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return;
  const bool osxsave = c & (1u << 27), fma = c & (1u << 12), f16c = c & (1u << 29), avx = c & (1u << 28);
  if (!osxsave || !avx) return;
  const uint64_t xcr0 = read_xcr0();
  const bool ymm_state = (xcr0 & 0x6) == 0x6;    /* SSE and AVX state */
  const bool zmm_state = (xcr0 & 0xe0) == 0xe0;  /* opmask, upper ZMM0-15, ZMM16-31 */
  if (!ymm_state) return;
  unsigned max_leaf = __get_cpuid_max(0, NULL);
  if (max_leaf < 7) return;
  __cpuid_count(7, 0, a, b, c, d);
  f->avx2 = b & (1u << 5);
  f->bmi2 = b & (1u << 8);
  f->fma = fma;
  f->f16c = f16c;
  if (zmm_state) {
    f->avx512f = b & (1u << 16);
    f->avx512dq = b & (1u << 17);
    f->avx512bw = b & (1u << 30);
    f->avx512vl = b & (1u << 31);
    f->avx512vnni = c & (1u << 11);
    unsigned a1, b1, c1, d1;
    __cpuid_count(7, 1, a1, b1, c1, d1);
    f->avx512bf16 = a1 & (1u << 5);
  }
  f->amx_int8 = (d & (1u << 24)) && (d & (1u << 25)) && (xcr0 & 0x60000) == 0x60000 && amx_permitted();
}
#endif

static const char *const level_names[LOOM_KERNELS_LEVEL_COUNT] = {"ref", "avx2", "avx512", "amx"};

const char *loom_kernel_level_name(loom_kernel_level level) {
  return (unsigned)level < LOOM_KERNELS_LEVEL_COUNT ? level_names[level] : "?";
}

bool loom_kernel_level_parse(const char *name, loom_kernel_level *level) {
  for (int i = 0; name && i < LOOM_KERNELS_LEVEL_COUNT; i++)
    if (strcmp(name, level_names[i]) == 0) {
      *level = (loom_kernel_level)i;
      return true;
    }
  return false;
}

static void init(void) {
#if defined(LOOM_KERNELS_X86)
  detect(&features);
#endif
  loom_kernels_fill_ref(&tables[LOOM_KERNELS_REF]);
  available[LOOM_KERNELS_REF] = true;
#if defined(LOOM_KERNELS_X86)
  const loom_cpu_features *f = &features;
  if (f->avx2 && f->fma && f->f16c) {
    tables[LOOM_KERNELS_AVX2] = tables[LOOM_KERNELS_REF];
    loom_kernels_fill_avx2(&tables[LOOM_KERNELS_AVX2]);
    loom_kernels_fill_qgemm_avx2(&tables[LOOM_KERNELS_AVX2]);
    loom_kernels_fill_qgemm_short_avx2(&tables[LOOM_KERNELS_AVX2]);
    loom_kernels_fill_act_avx2(&tables[LOOM_KERNELS_AVX2]);
    available[LOOM_KERNELS_AVX2] = true;
    if (f->avx512f && f->avx512bw && f->avx512vl && f->avx512dq) {
      tables[LOOM_KERNELS_AVX512] = tables[LOOM_KERNELS_AVX2];
      loom_kernels_fill_avx512(&tables[LOOM_KERNELS_AVX512]);
      loom_kernels_fill_act_avx512(&tables[LOOM_KERNELS_AVX512]);
      if (f->avx512vnni) loom_kernels_fill_vnni(&tables[LOOM_KERNELS_AVX512]);
      available[LOOM_KERNELS_AVX512] = true;
      if (f->avx512vnni && f->amx_int8) {
        tables[LOOM_KERNELS_AMX] = tables[LOOM_KERNELS_AVX512];
        loom_kernels_fill_amx(&tables[LOOM_KERNELS_AMX]);
        available[LOOM_KERNELS_AMX] = true;
      }
    }
  }
#endif
  for (int i = 0; i < LOOM_KERNELS_LEVEL_COUNT; i++) {
    tables[i].level = (loom_kernel_level)i;
    tables[i].name = level_names[i];
  }
  /* LOOM_KERNELS caps the level: a level the machine lacks gives the best one
   * below it, an unknown value the best level (docs/kernels.md). */
  loom_kernel_level want = LOOM_KERNELS_LEVEL_COUNT - 1, parsed;
  if (loom_kernel_level_parse(getenv("LOOM_KERNELS"), &parsed)) want = parsed;
  while (!available[want]) want--;
  atomic_store(&current, &tables[want]);
}

const loom_cpu_features *loom_cpu_features_get(void) {
  pthread_once(&once, init);
  return &features;
}

loom_kernel_level loom_kernels_best_level(void) {
  pthread_once(&once, init);
  int best = LOOM_KERNELS_LEVEL_COUNT - 1;
  while (!available[best]) best--;
  return (loom_kernel_level)best;
}

const loom_kernels *loom_kernels_get(void) {
  const loom_kernels *k = atomic_load_explicit(&current, memory_order_acquire);
  if (k) return k;
  pthread_once(&once, init);
  return atomic_load(&current);
}

const loom_kernels *loom_kernels_for(loom_kernel_level level) {
  pthread_once(&once, init);
  if ((unsigned)level >= LOOM_KERNELS_LEVEL_COUNT || !available[level]) return NULL;
  return &tables[level];
}

bool loom_kernels_force(loom_kernel_level level) {
  const loom_kernels *k = loom_kernels_for(level);
  if (!k) return false;
  atomic_store(&current, k);
  return true;
}
