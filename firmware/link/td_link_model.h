/*
 * Protocol helpers that know the generated model API (model.h): the INFO/TENSOR answer to
 * HELLO, LOAD_INPUT into the arena, OUTPUT chunks, PROFILE frames and DONE. Shared by the
 * validate, bench and kws applications so they all describe themselves the same way.
 */
#ifndef TD_LINK_MODEL_H
#define TD_LINK_MODEL_H

#include <stdint.h>

#include "td_link.h"

/* HELLO: INFO (app name, board, model, unit) then one TENSOR frame per input and output. */
void td_link_send_model_info(uint8_t seq, const char *app);
/* LOAD_INPUT: checks tensor index and range, copies into the arena, ACK or ERROR BAD_ARG. */
void td_link_load_input(const td_frame_t *f);
/* 1 when every input has received at least its size in LOAD_INPUT bytes since the firmware
 * started or since td_link_inputs_consumed; else sends ERROR STATE for request req and
 * returns 0. An INVOKE resent without its inputs (which the last inference may have
 * overwritten) or after a reset that lost them is refused, never computed. */
int td_link_inputs_loaded(uint8_t seq, uint8_t req);
/* After an inference: its inputs must be loaded again before the next one. */
void td_link_inputs_consumed(void);
/* OUTPUT frames of every output tensor, TD_LINK_CHUNK bytes each. */
void td_link_send_outputs(uint8_t seq);
/* PROFILE frames for counts[0..n), TD_LINK_PROFILE_PER_FRAME per frame. */
void td_link_send_profile(uint8_t seq, const uint32_t *counts, uint32_t n);
/* DONE for request type req: runs, min/max per run, total over the runs. */
void td_link_send_done(uint8_t seq, uint8_t req, uint32_t runs, uint32_t min, uint32_t max,
                       uint64_t total);

/* A model application (validate, bench, kws): its name in INFO; start, run once the link
 * is up (it logs "<name> ready", or why the application cannot serve, and does any start-up
 * work); and the handler of its own requests, which answers a frame and returns 0, or
 * returns TD_LINK_UNHANDLED for any type it does not serve. */
typedef struct {
    const char *name;
    void (*start)(void);
    int (*handle)(const td_frame_t *f);
} td_link_app_t;

/* The whole main of a model application; never returns. Brings up the platform and the
 * link (whose receive buffer is static here), calls app->start, then serves frames for
 * ever: each goes to app->handle first; the requests every model application answers alike
 * come next: HELLO (INFO and TENSOR frames under app->name) and STOP (ACK, then
 * td_platform_exit(0)); PING and unknown types are td_link_step's. */
void td_link_run(const td_link_app_t *app);

/* One step of td_link_run's loop, for an application with a main loop of its own (the kws
 * app listening to a microphone): polls ``link`` and serves at most one frame as td_link_run
 * does. Returns 1 if a frame was handled. */
int td_link_serve(td_link_t *link, const td_link_app_t *app);

#endif /* TD_LINK_MODEL_H */
