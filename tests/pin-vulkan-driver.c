/*
 * Linked into the test programs that open Vulkan (tests/gpu, tests/gui).
 *
 * Mesa's lavapipe (22.3.6-1+deb12u2) keeps one 128-byte block allocated for
 * the life of the process, and the Vulkan loader unloads the driver when
 * the last instance is destroyed. At exit LeakSanitizer then finds a block
 * allocated from an address no loaded module covers ("<unknown module>"),
 * which no suppression can name. In sanitized builds the driver is loaded
 * here first with RTLD_NODELETE, so the loader's later dlopen and dlclose
 * leave it mapped and tests/lsan.supp's leak:libvulkan_lvp applies. Other
 * builds do nothing; a machine without lavapipe has nothing to pin.
 */
#if defined(__SANITIZE_ADDRESS__)
#include <dlfcn.h>

__attribute__((constructor)) static void pin_vulkan_driver(void) {
  (void)dlopen("libvulkan_lvp.so", RTLD_LAZY | RTLD_NODELETE);
}
#else
/* ISO C wants a translation unit to declare something. */
typedef int pin_vulkan_driver_unused;
#endif
