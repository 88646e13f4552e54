#include "io/base64.h"

#include <stdint.h>
#include <stdio.h>

#include "core/i18n.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

bool base64_encoded_len(size_t n, size_t *out) {
  size_t groups = n / 3 + (n % 3 != 0);
  if (groups > SIZE_MAX / 4 - 1) return false;
  *out = groups * 4;
  return true;
}

void base64_encode(const void *data, size_t n, char *dst) {
  const unsigned char *p = data;
  size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
    *dst++ = alphabet[v >> 18];
    *dst++ = alphabet[(v >> 12) & 63];
    *dst++ = alphabet[(v >> 6) & 63];
    *dst++ = alphabet[v & 63];
  }
  if (n - i == 1) {
    uint32_t v = (uint32_t)p[i] << 16;
    *dst++ = alphabet[v >> 18];
    *dst++ = alphabet[(v >> 12) & 63];
    *dst++ = '=';
    *dst++ = '=';
  } else if (n - i == 2) {
    uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
    *dst++ = alphabet[v >> 18];
    *dst++ = alphabet[(v >> 12) & 63];
    *dst++ = alphabet[(v >> 6) & 63];
    *dst++ = '=';
  }
  *dst = '\0';
}

static int sextet(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

bool base64_decode_exact(const char *text, size_t text_len, void *dst, size_t dst_len, char *why, size_t why_size) {
  size_t want = 0;
  if (!base64_encoded_len(dst_len, &want) || text_len != want) {
    snprintf(why, why_size, _("expected %zu base64 characters for %zu bytes, found %zu"), want, dst_len, text_len);
    return false;
  }
  unsigned char *out = dst;
  size_t o = 0;
  /* The padding is fixed by the byte count: "xx==" for one trailing byte, "xxx=" for two. */
  int want_pad = dst_len % 3 == 0 ? 0 : 3 - (int)(dst_len % 3);
  for (size_t i = 0; i < text_len; i += 4) {
    bool last_group = i + 4 == text_len;
    uint32_t v = 0;
    int pad = 0;
    for (int k = 0; k < 4; k++) {
      unsigned char c = (unsigned char)text[i + k];
      int s;
      if (c == '=' && last_group && k >= 4 - want_pad) {
        pad++;
        s = 0;
      } else {
        s = sextet(c);
      }
      if (s < 0) {
        if (c >= 0x20 && c < 0x7f)
          snprintf(why, why_size, _("invalid base64 character '%c' at offset %zu"), c, i + (size_t)k);
        else
          snprintf(why, why_size, _("invalid base64 byte 0x%02x at offset %zu"), c, i + (size_t)k);
        return false;
      }
      v = v << 6 | (uint32_t)s;
    }
    if (last_group && pad != want_pad) {
      snprintf(why, why_size, _("wrong base64 padding at offset %zu for a length of %zu bytes"), i, dst_len);
      return false;
    }
    /* Bits below the last full byte must be zero, or two texts would
     * decode to the same bytes. */
    if ((pad == 1 && (v & 0xff) != 0) || (pad == 2 && (v & 0xffff) != 0)) {
      snprintf(why, why_size, _("non-canonical base64 padding bits at offset %zu"), i);
      return false;
    }
    unsigned char bytes[3] = {(unsigned char)(v >> 16), (unsigned char)(v >> 8), (unsigned char)v};
    for (int k = 0; k < 3 - pad; k++) out[o++] = bytes[k];
  }
  return true;
}
