/*
 * td_audio: where the keyword-spotting app's samples come from (docs/audio.md).
 *
 * One interface, one implementation per source kind, chosen on the host from the board's
 * [audio] table: firmware/audio/nrf_pdm/ (the nRF52840 PDM microphone, EasyDMA),
 * firmware/audio/virtual/ (QEMU: samples from a host file, paced by the emulated clock).
 * The app includes only this header; it never knows where the samples come from. (Audio
 * sent by a PC in AUDIO frames is not a source: the kws app's serial mode feeds its
 * pipeline from the frames directly.)
 *
 * Samples are 16 kHz mono int16 (full scale 32768), delivered in blocks of block_samples
 * into a ring of nblocks blocks that the app owns (static memory: the DMA target on a chip).
 * Blocks are numbered 0, 1, 2, ... as the stream is heard: block n holds samples
 * [n * block_samples, (n + 1) * block_samples) of the stream, and a lost block keeps its
 * number, so the stream's time never drifts. Each delivered block lies in the slot after the
 * previous delivered block's (wrapping), so two consecutive blocks can be read as one span of
 * the ring (ring_len = nblocks * block_samples).
 *
 * Ownership: a completed block belongs to the app until td_audio_release() hands it back.
 * The source fills the slots of released blocks only. When the source must start a block
 * and the slot it would fill is still the app's (the app fell behind by more than the ring
 * holds), that block's samples are dropped and counted in td_audio_overruns(); the app
 * notices the gap in the block numbers it receives. No sample is ever lost silently.
 *
 * Concurrency: the source completes blocks in an interrupt (the PDM's END event, the
 * virtual source's timer tick); every function here is called from thread mode only and
 * is safe against that interrupt. Between blocks the app may sleep (td_audio_wait()).
 */
#ifndef TD_AUDIO_H
#define TD_AUDIO_H

#include <stdint.h>

#define TD_AUDIO_SAMPLE_RATE 16000u

typedef struct {
    int16_t *ring;          /* nblocks * block_samples samples, owned by the app, static */
    uint32_t nblocks;       /* >= 3: one being filled, one armed, one held by the app */
    uint32_t block_samples; /* samples per block (the kws app: one front-end stride) */
} td_audio_config_t;

/* Starts the source (clocks, pins, microphone power, DMA, the virtual file). Returns 0, or
 * a negative value when the source cannot start (no file, bad config): the app reports it.
 * Blocks of a stream before td_audio_start are not heard. */
int td_audio_start(const td_audio_config_t *cfg);

/* The oldest completed block the app has not taken yet: returns its samples (a slot of the
 * ring) and stores its number in *block, or returns 0 (NULL) when none is ready. A taken block stays the app's
 * (its slot is not refilled) until released. */
const int16_t *td_audio_take(uint32_t *block);

/* Hands back every taken block with a number below `upto`: their slots may be filled again. */
void td_audio_release(uint32_t upto);

/* Samples dropped so far because the app held the slot the source needed (see above). */
uint32_t td_audio_overruns(void);

/* 1 when the source will deliver no more blocks (the virtual source at the end of its
 * file; a microphone never ends), once every completed block has been taken. */
int td_audio_ended(void);

/* Sleeps (WFI) until the source's next interrupt, unless a block is already waiting. */
void td_audio_wait(void);

/* Stops the source (the PDM: TASKS_STOP, then disabled). */
void td_audio_stop(void);

#endif /* TD_AUDIO_H */
