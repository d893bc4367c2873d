/* WebSocket frame parsing and headers (ws.h). */
#include "ws.h"

static int known_opcode(int op) {
  return op == DMN_WS_CONT || op == DMN_WS_TEXT || op == DMN_WS_BIN || op == DMN_WS_CLOSE || op == DMN_WS_PING ||
         op == DMN_WS_PONG;
}

long dmn_ws_parse(uint8_t *buf, size_t len, size_t max, struct dmn_ws_frame *f) {
  if (len < 2)
    return 0;
  int op = buf[0] & 0x0f;
  if ((buf[0] & 0x70) || !known_opcode(op) || !(buf[1] & 0x80))
    return -1;
  uint64_t plen = buf[1] & 0x7f;
  size_t h = 2;
  if (plen == 126) {
    if (len < 4)
      return 0;
    plen = (uint64_t)buf[2] << 8 | buf[3];
    h = 4;
  } else if (plen == 127) {
    if (len < 10)
      return 0;
    plen = 0;
    for (int i = 0; i < 8; i++)
      plen = plen << 8 | buf[2 + i];
    h = 10;
  }
  int fin = buf[0] >> 7;
  if (op >= DMN_WS_CLOSE && (plen > 125 || !fin))
    return -1;
  if (plen > max)
    return -1;
  if (len < h + 4 || len - h - 4 < plen)
    return 0;
  const uint8_t *mask = buf + h;
  uint8_t *p = buf + h + 4;
  for (uint64_t i = 0; i < plen; i++)
    p[i] ^= mask[i & 3];
  f->fin = fin;
  f->opcode = op;
  f->payload = p;
  f->len = (size_t)plen;
  return (long)(h + 4 + plen);
}

size_t dmn_ws_header(uint8_t hdr[10], int opcode, uint64_t len) {
  hdr[0] = (uint8_t)(0x80 | opcode);
  if (len < 126) {
    hdr[1] = (uint8_t)len;
    return 2;
  }
  if (len < 65536) {
    hdr[1] = 126;
    hdr[2] = (uint8_t)(len >> 8);
    hdr[3] = (uint8_t)len;
    return 4;
  }
  hdr[1] = 127;
  for (int i = 0; i < 8; i++)
    hdr[2 + i] = (uint8_t)(len >> (56 - 8 * i));
  return 10;
}
