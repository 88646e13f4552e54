/*
 * Shared by the libFuzzer targets: readers that take a path get the input
 * through a memfd (/proc/self/fd/N), so they run unchanged and nothing
 * touches the disk.
 */
#pragma once
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

/* Writes data to a fresh memfd (meson defines _GNU_SOURCE for memfd_create)
 * and puts its path in path[]; returns the fd (close it after use) or -1. */
static inline int fuzz_memfd(const uint8_t *data, size_t size, char *path, size_t path_size) {
  int fd = memfd_create("loom-fuzz", MFD_CLOEXEC);
  if (fd < 0) return -1;
  size_t done = 0;
  while (done < size) {
    ssize_t n = write(fd, data + done, size - done);
    if (n <= 0) {
      close(fd);
      return -1;
    }
    done += (size_t)n;
  }
  snprintf(path, path_size, "/proc/self/fd/%d", fd);
  return fd;
}
