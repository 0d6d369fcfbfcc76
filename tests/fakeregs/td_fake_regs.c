/* The fake register block of td_fake_regs.h (host tests only). */
#include "td_fake_regs.h"

#include <stdio.h>
#include <stdlib.h>

#define TD_FAKE_MAX_REGS 1024
#define TD_FAKE_MAX_SAME_READS 100000u

static uint32_t fake_addr[TD_FAKE_MAX_REGS];
static uint32_t fake_value[TD_FAKE_MAX_REGS];
static unsigned fake_count;
static td_fake_write_hook_t fake_hook;
static uint32_t last_read_addr;
static uint32_t last_read_value;
static uint32_t same_reads;

static uint32_t *slot(uint32_t addr)
{
    for (unsigned i = 0; i < fake_count; ++i) {
        if (fake_addr[i] == addr)
            return &fake_value[i];
    }
    if (fake_count == TD_FAKE_MAX_REGS) {
        printf("FULL\n");
        exit(4);
    }
    fake_addr[fake_count] = addr;
    fake_value[fake_count] = 0;
    return &fake_value[fake_count++];
}

void td_fake_set_model(td_fake_write_hook_t on_write) { fake_hook = on_write; }

void td_fake_poke(uint32_t addr, uint32_t value) { *slot(addr) = value; }

uint32_t td_fake_peek(uint32_t addr) { return *slot(addr); }

void td_fake_mark(const char *label)
{
    printf("M %s\n", label);
    same_reads = 0;
}

uint32_t td_reg_read(uint32_t addr)
{
    uint32_t v = *slot(addr);
    if (addr == last_read_addr && v == last_read_value) {
        if (++same_reads >= TD_FAKE_MAX_SAME_READS) {
            printf("STUCK 0x%08X\n", (unsigned)addr);
            fflush(stdout);
            exit(3);
        }
        if (same_reads > 2u)
            return v; /* a polling loop: log its first reads only */
    } else {
        same_reads = 0;
    }
    last_read_addr = addr;
    last_read_value = v;
    printf("R 0x%08X 0x%08X\n", (unsigned)addr, (unsigned)v);
    return v;
}

void td_reg_write(uint32_t addr, uint32_t value)
{
    uint32_t *r = slot(addr);
    uint32_t before = *r;
    printf("W 0x%08X 0x%08X\n", (unsigned)addr, (unsigned)value);
    *r = value;
    same_reads = 0;
    last_read_addr = 0xFFFFFFFFu;
    if (fake_hook)
        fake_hook(addr, value, before);
}
