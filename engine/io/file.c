#include "loom/file.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/i18n.h"

static int write_fully(int fd, const char *p, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

LOOM_API int loom_file_write_atomic(const char *path, const void *data, size_t len, loom_error *err) {
  size_t plen = strlen(path);
  char *tmp = malloc(plen + 16);
  if (!tmp) return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory"), path);
  snprintf(tmp, plen + 16, "%s.tmp-XXXXXX", path);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    int e = errno;
    free(tmp);
    return loom_error_set(err, LOOM_ERR_IO, _("%s: cannot create a temporary file: %s"), path, strerror(e));
  }
  /* mkstemp creates 0600; a saved document should get the usual umask mode. */
  mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);

  if (write_fully(fd, data, len) != 0 || fsync(fd) != 0) {
    int e = errno;
    close(fd);
    unlink(tmp);
    free(tmp);
    return loom_error_set(err, LOOM_ERR_IO, _("%s: cannot write: %s"), path, strerror(e));
  }
  if (close(fd) != 0) {
    int e = errno;
    unlink(tmp);
    free(tmp);
    return loom_error_set(err, LOOM_ERR_IO, _("%s: cannot write: %s"), path, strerror(e));
  }
  if (rename(tmp, path) != 0) {
    int e = errno;
    unlink(tmp);
    free(tmp);
    return loom_error_set(err, LOOM_ERR_IO, _("%s: cannot replace the file: %s"), path, strerror(e));
  }
  /* Make the rename itself durable. */
  char *dcopy = strdup(path);
  if (dcopy) {
    int dfd = open(dirname(dcopy), O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) {
      fsync(dfd);
      close(dfd);
    }
    free(dcopy);
  }
  free(tmp);
  return LOOM_OK;
}

LOOM_API int loom_file_read_all(const char *path, size_t max_len, char **data, size_t *len, loom_error *err) {
  *data = NULL;
  *len = 0;
  int fd = open(path, O_RDONLY);
  if (fd < 0) return loom_error_set(err, LOOM_ERR_IO, _("%s: cannot open: %s"), path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return loom_error_set(err, LOOM_ERR_IO, _("%s: cannot read: %s"), path, strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return loom_error_set(err, LOOM_ERR_IO, _("%s: not a regular file"), path);
  }
  if ((unsigned long long)st.st_size > max_len) {
    close(fd);
    return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: file is %lld bytes, more than the limit of %zu bytes"), path,
                          (long long)st.st_size, max_len);
  }
  size_t cap = (size_t)st.st_size;
  char *buf = malloc(cap + 1);
  if (!buf) {
    close(fd);
    return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory"), path);
  }
  size_t got = 0;
  for (;;) {
    if (got == cap) break;
    ssize_t n = read(fd, buf + got, cap - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      free(buf);
      close(fd);
      return loom_error_set(err, LOOM_ERR_IO, _("%s: cannot read: %s"), path, strerror(e));
    }
    if (n == 0) break;
    got += (size_t)n;
  }
  close(fd);
  buf[got] = '\0';
  *data = buf;
  *len = got;
  return LOOM_OK;
}
