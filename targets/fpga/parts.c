/* targets/fpga/parts.c — the FPGA parts whose resources dlcc knows: what
 * the report's utilization is measured against (docs/targets/fpga.md,
 * "Parts").  Figures from each device's product table: DSP slices, LUTs,
 * flip-flops, 18 Kb block RAMs (two per 36 Kb block) and 288 Kb UltraRAMs. */
#include "targets/fpga/fpga_impl.h"

#include <string.h>

static const TgtFpgaPart parts[] = {
    /* prefix of the part name      board                       DSP     LUT      FF        BRAM18K URAM */
    { "xcu50-",   "Alveo U50",                 5952,  871680, 1743360, 2688, 640 },
    { "xcu250-",  "Alveo U250",               12288, 1728000, 3456000, 5376, 1280 },
    { "xczu7ev-", "Zynq UltraScale+ ZCU104 (XCZU7EV)", 1728,  230400,  460800,  624,   96 },
    { "xc7z020-", "Zynq-7020",                  220,   53200,  106400,  280,    0 },
};

const TgtFpgaPart *tgt_fpga_part(const char *name)
{
    for (size_t i = 0; name && i < sizeof parts / sizeof *parts; i++)
        if (strncmp(name, parts[i].prefix, strlen(parts[i].prefix)) == 0)
            return &parts[i];
    return NULL;
}

int64_t tgt_fpga_onchip_budget(const char *part)
{
    const TgtFpgaPart *p = tgt_fpga_part(part);
    if (!p)
        p = tgt_fpga_part(TGT_FPGA_DEFAULT_PART);
    return p ? p->bram18k * 18432 / 8 / 2 : (int64_t)1 << 20;
}
