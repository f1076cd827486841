#!/usr/bin/env python3
"""Time one forward+backward training step of a Hugging Face `transformers` model built from
its config with random weights, at the same micro-batch and sequence length as
`napkin calibrate`, in bf16, and print the step time, tokens/s and the MFU napkin would
compute from it. This is the reality check for napkin calibrate's matmul-only estimate
(docs/calibration/README.md). Needs a CUDA GPU, torch and transformers.

  python3 tests/gpu/calibrate_torch.py --config meta-llama/Meta-Llama-3-8B --micro-batch 1 \\
      --seq 2048 --peak-tflops 989.5 --napkin-json llama3-8b.json

--config takes a hub id or a local folder holding config.json (only the config is read; no
weights are downloaded). The model is random-initialised: throughput does not depend on the
weights' values.
"""
import argparse
import json
import statistics
import time

import torch
from transformers import AutoConfig, AutoModelForCausalLM


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", required=True, help="HF hub id or folder with config.json")
    ap.add_argument("--micro-batch", type=int, default=1)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--attn", default="sdpa", help="attn_implementation: sdpa, flash_attention_2, eager")
    ap.add_argument("--peak-tflops", type=float, help="the card's dense bf16 peak, for MFU")
    ap.add_argument("--napkin-json", help="output of `napkin calibrate --json` at the same settings, to compare")
    ap.add_argument("--layers", type=int, help="override num_hidden_layers (to fit a big model on one GPU)")
    args = ap.parse_args()

    config = AutoConfig.from_pretrained(args.config)
    if args.layers:
        config.num_hidden_layers = args.layers
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config, torch_dtype=torch.bfloat16, attn_implementation=args.attn)
    model = model.cuda().train()
    params = sum(p.numel() for p in model.parameters())
    vocab = config.vocab_size
    ids = torch.randint(0, vocab, (args.micro_batch, args.seq), device="cuda")

    def step():
        out = model(input_ids=ids, labels=ids)
        out.loss.backward()
        model.zero_grad(set_to_none=True)

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(args.steps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    step_s = statistics.median(times)
    tokens = args.micro_batch * args.seq
    result = {
        "config": args.config,
        "layers": config.num_hidden_layers,
        "params": params,
        "micro_batch": args.micro_batch,
        "seq": args.seq,
        "attn_implementation": args.attn,
        "step_time_s": step_s,
        "tokens_per_s": tokens / step_s,
        "device": torch.cuda.get_device_name(),
        "measured_at": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    if args.napkin_json:
        with open(args.napkin_json) as f:
            napkin = json.load(f)
        result["napkin_step_matmul_time_s"] = napkin["step_matmul_time_s"]
        # napkin times only the matrix products: its step time should be the smaller.
        result["matmul_share_of_real_step"] = napkin["step_matmul_time_s"] / step_s
        if args.peak_tflops:
            flops_per_token = napkin["model_flops_per_token"]
            result["mfu_real"] = flops_per_token * tokens / step_s / (args.peak_tflops * 1e12)
            result["mfu_napkin"] = napkin["mfu"]
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
