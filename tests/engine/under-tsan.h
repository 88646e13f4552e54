/*
 * UNDER_TSAN: true in the ThreadSanitizer build (tools/test runs the
 * threaded engine tests a third time under it). That run looks for races,
 * so a test may skip there what runs on one thread only: the other builds
 * check those bits, and under ThreadSanitizer they cost the most time.
 */
#pragma once

#ifdef __SANITIZE_THREAD__
enum { UNDER_TSAN = 1 };
#else
enum { UNDER_TSAN = 0 };
#endif
