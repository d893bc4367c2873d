/* WebSocket frames (RFC 6455) as the daemon's server side sees them: parsing a client's masked frames in place and writing unmasked frame headers. Pure: no I/O. */
#ifndef DMN_WS_H
#define DMN_WS_H
#include <stddef.h>
#include <stdint.h>

enum { DMN_WS_CONT = 0, DMN_WS_TEXT = 1, DMN_WS_BIN = 2, DMN_WS_CLOSE = 8, DMN_WS_PING = 9, DMN_WS_PONG = 10 };

struct dmn_ws_frame {
  int fin;
  int opcode;
  uint8_t *payload; /* inside the caller's buffer, unmasked in place */
  size_t len;
};

/* Parses one frame at buf[0..len). Returns the bytes the frame takes (header and payload)
 * with *f filled and its payload unmasked in place; 0 when more bytes are needed; -1 for a
 * frame a server must refuse: unmasked (clients always mask), reserved bits or opcodes, a
 * control frame over 125 bytes or fragmented, or a payload over max. */
long dmn_ws_parse(uint8_t *buf, size_t len, size_t max, struct dmn_ws_frame *f);

/* Writes the header of an unmasked final frame of opcode and payload length into hdr (room
 * for 10 bytes). Returns its length (2, 4 or 10). */
size_t dmn_ws_header(uint8_t hdr[10], int opcode, uint64_t len);

#endif
