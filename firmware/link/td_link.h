/*
 * td_link: device side of the tinydeploy serial protocol (docs/protocol.md is the spec).
 *
 * Frames on the wire are COBS(body) followed by 0x00; body = type u8, seq u8, length u16 LE,
 * payload[length], CRC-16/CCITT-FALSE u16 LE over everything before it.
 *
 * Invariants: no allocation (one fixed receive buffer inside td_link_t, senders encode on
 * the fly through a 255-byte block on the stack); every delimited block that is not a valid
 * frame gets an ERROR reply and is forgotten; a block longer than the buffer is discarded as
 * it arrives and reported once its delimiter comes, so no input can overflow, hang or crash
 * the decoder. Requests are answered in order (stop-and-wait), replies echo the request's
 * sequence number; unsolicited frames (LOG, EVENT) use sequence 0.
 */
#ifndef TD_LINK_H
#define TD_LINK_H

#include <stdint.h>

#include "td_fmt.h"

#define TD_LINK_VERSION 2u
#define TD_LINK_MAX_PAYLOAD 256u
#define TD_LINK_HEADER 4u
#define TD_LINK_BODY_MAX (TD_LINK_HEADER + TD_LINK_MAX_PAYLOAD + 2u)
#define TD_LINK_ENCODED_MAX (TD_LINK_BODY_MAX + TD_LINK_BODY_MAX / 254u + 1u)
/* data bytes per LOAD_INPUT / OUTPUT chunk, per-op counts per PROFILE frame */
#define TD_LINK_CHUNK 240u
#define TD_LINK_PROFILE_PER_FRAME 48u

enum {
    TD_MSG_HELLO = 0x01, TD_MSG_LOAD_INPUT = 0x02, TD_MSG_INVOKE = 0x03, TD_MSG_BENCH = 0x04,
    TD_MSG_AUDIO = 0x05, TD_MSG_PING = 0x06, TD_MSG_STOP = 0x07,
    TD_MSG_ACK = 0x80, TD_MSG_INFO = 0x81, TD_MSG_TENSOR = 0x82, TD_MSG_OUTPUT = 0x83,
    TD_MSG_PROFILE = 0x84, TD_MSG_DONE = 0x85, TD_MSG_EVENT = 0x86, TD_MSG_LOG = 0x87,
    TD_MSG_ERROR = 0x88, TD_MSG_STATUS = 0x89
};

enum {
    TD_ERR_CRC = 1, TD_ERR_COBS = 2, TD_ERR_TRUNCATED = 3, TD_ERR_LENGTH = 4,
    TD_ERR_OVERSIZED = 5, TD_ERR_UNKNOWN_TYPE = 6, TD_ERR_BAD_ARG = 7, TD_ERR_STATE = 8,
    TD_ERR_INTERNAL = 9
};

enum { TD_LOG_DEBUG = 0, TD_LOG_INFO = 1, TD_LOG_WARN = 2, TD_LOG_ERROR = 3, TD_LOG_FAULT = 4 };

/* A received frame; payload points into the link's buffer, valid until the next poll. */
typedef struct {
    uint8_t type;
    uint8_t seq;
    uint16_t len;
    const uint8_t *payload;
} td_frame_t;

typedef struct {
    uint8_t rx[TD_LINK_ENCODED_MAX]; /* encoded bytes of the frame being received */
    uint16_t rx_len;
    uint8_t overflow;                /* 1 while discarding an oversized block */
    uint32_t frames_ok;              /* valid frames received */
    uint32_t frames_bad;             /* blocks answered with an error */
} td_link_t;

/* Handler result: 0 = handled (it sent its replies), TD_LINK_UNHANDLED = unknown type. */
#define TD_LINK_UNHANDLED (-1)
typedef int (*td_link_handler_t)(td_link_t *link, const td_frame_t *frame, void *ctx);

void td_link_init(td_link_t *link);

/* Reads the bytes the UART has; returns 1 and fills *frame when a valid frame is complete,
 * 0 otherwise. Invalid blocks are answered with ERROR here and never returned. */
int td_link_poll(td_link_t *link, td_frame_t *frame);

/* One step of a dispatch loop: poll, answer PING itself, pass other frames to handler, and
 * answer UNKNOWN_TYPE when the handler does not know the type. Returns 1 if a frame was
 * handled. Applications call it in their main loop between their own work. */
int td_link_step(td_link_t *link, td_link_handler_t handler, void *ctx);

/* Encodes and writes one frame (no state, no allocation; payload may be NULL if len = 0).
 * len above TD_LINK_MAX_PAYLOAD is truncated. */
void td_link_send(uint8_t type, uint8_t seq, const uint8_t *payload, uint16_t len);
/* Encodes and writes one frame whose payload packs the arguments in the order of `layout`,
 * one letter per field (docs/protocol.md's field types), as the fields are encoded: no
 * payload buffer. Beyond TD_LINK_MAX_PAYLOAD bytes the payload is truncated.
 *   b u8, h u16 (each passed as an integer argument)   w u32 (a uint32_t)   q u64 (uint64_t)
 *   f f32 (const float *: no double on cores with a single-precision FPU)
 *   x bytes (const void *, uint32_t n)
 *   W u32 array (const uint32_t *, uint32_t n)
 *   s string: u8 length, then its bytes up to the NUL (const char *, uint32_t max <= 255)
 *   t text: its bytes up to the NUL, no length (const char *, uint32_t max) */
void td_link_sendf(uint8_t type, uint8_t seq, const char *layout, ...);
void td_link_ack(uint8_t seq, uint8_t acked_type);
void td_link_error(uint8_t seq, uint8_t code, uint8_t ref_type, const char *text);
void td_link_log(uint8_t level, const char *text);
/* EVENT: label index, score, timestamp in ms (e.g. a keyword detection). */
void td_link_event(uint16_t label, float score, uint32_t timestamp_ms);

uint16_t td_crc16(const uint8_t *data, uint32_t n, uint16_t crc);

/* Payload reader: reads past the end return 0 and set short_read. */
typedef struct {
    const uint8_t *p;
    uint16_t len;
    uint16_t pos;
    uint8_t short_read;
} td_rd_t;

void td_rd_init(td_rd_t *r, const td_frame_t *f);
uint8_t td_rd_u8(td_rd_t *r);
uint16_t td_rd_u16(td_rd_t *r);
uint32_t td_rd_u32(td_rd_t *r);

/* Little helpers for text frames without printf: appends decimal / hex to a string. */

#endif /* TD_LINK_H */
