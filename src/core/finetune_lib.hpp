#pragma once
// What a fine-tuning library does that a user would not guess, and that changes the memory of a
// LoRA/QLoRA run: the adapters' dtype, what a frozen base keeps outside its quantized matrices,
// whether a 4-bit layer saves its input for the backward pass, LoRA dropout, fused kernels.
// Each field is read from the library's source (cited beside it); `--finetune-lib` picks one.
#include <array>
#include <string_view>

namespace napkin {

struct FinetuneLib {
  std::string_view name;
  std::string_view description;
  double adapter_bytes = 4;         // per adapter value (weights, their gradients, torch optimizer states)
  std::string_view adapter_dtype;
  std::string_view adapter_source;
  double unquantized_bytes = 2;     // embeddings, LM head, norms, biases of a quantized base
  std::string_view unquantized_source;
  bool quantized_saves_input = true;  // a 4-bit/8-bit frozen layer keeps its input for backward
  std::string_view saves_input_source;
  double lora_dropout = 0;          // the default in its LoRA config (PEFT keeps a dropped copy of x when > 0)
  std::string_view dropout_source;
  bool fused_lora = false;          // fused LoRA + dequantisation kernels
  bool offloads_checkpoints = false;  // gradient checkpointing keeps the layer inputs in host memory
  double logits_bytes = 4;            // per logit value kept for the loss (napkin's full-training default: 4, fp32)
  std::string_view kernels_source;
};

inline constexpr std::array<FinetuneLib, 7> finetune_libs = {{
    {"hf-peft", "Hugging Face transformers + PEFT + bitsandbytes (Trainer, prepare_model_for_kbit_training)", 4, "fp32",
     "peft/tuners/tuners_utils.py BaseTuner._cast_adapter_dtype: get_peft_model(autocast_adapter_dtype=True) upcasts bf16/fp16 adapters to fp32",
     4, "peft/utils/other.py prepare_model_for_kbit_training: every non-quantized fp16/bf16 parameter cast to fp32",
     true, "bitsandbytes/autograd/_functions.py MatMul4Bit.forward: ctx.tensors = (A, B) when any input needs a gradient",
     0, "peft/tuners/lora/config.py LoraConfig.lora_dropout = 0.0", false, false, 6,
     "transformers: the model returns bf16 logits, loss_utils.py ForCausalLMLoss upcasts them (logits.float()) and cross_entropy keeps the fp32 log-softmax: 2 + 4 B"},
    {"qlora", "the QLoRA paper's script (artidoro/qlora qlora.py): PEFT + bitsandbytes, adapters and embeddings back in bf16", 2,
     "bf16", "qlora.py get_accelerate_model: LoraLayer modules .to(torch.bfloat16) with --bf16", 2,
     "qlora.py get_accelerate_model: norms fp32 (not counted apart), lm_head and embed_tokens back to bf16", true,
     "bitsandbytes MatMul4Bit.forward (as hf-peft)", 0.05,
     "QLoRA paper appendix B.2: LoRA dropout 0.1 up to 13B, 0.05 for 33B and 65B (0.05 here)", false, false, 8,
     "transformers 4.31 LlamaForCausalLM.forward: logits.float() returned, and the fp32 log-softmax CrossEntropyLoss keeps: 4 + 4 B"},
    {"torchtune", "PyTorch torchtune LoRA/QLoRA recipes (lora_finetune_single_device.py)", 2, "bf16",
     "torchtune recipes: training.set_default_dtype(dtype=bf16) while building the model, so lora_a/lora_b are bf16", 2,
     "torchtune: only LoRALinear/FrozenNF4Linear weights are NF4 (to_nf4); embeddings, norms, output stay bf16", false,
     "torchtune/modules/low_precision/_utils.py / torchao dtypes/nf4tensor.py LinearNF4.forward: ctx.nf4_weight = weight, the input is not saved",
     0, "torchtune configs (llama3_1/8B_qlora_single_device.yaml): lora_dropout: 0.0", false, false, 4,
     "torchtune/modules/loss CEWithChunkedOutputLoss: each bf16 chunk upcast and its fp32 log-softmax kept; the bf16 chunks freed after the loss"},
    {"torchtune-compile", "torchtune with compile: True (the setting of its README's memory table)", 2, "bf16",
     "as torchtune", 2, "as torchtune", false, "as torchtune", 0, "as torchtune", false, false, 2,
     "recipes/lora_finetune_single_device.py: training.compile_loss; Inductor fuses the upcast, log-softmax and loss and keeps the bf16 logits, recomputing the rest in backward"},
    {"litgpt", "Lightning-AI LitGPT finetune lora (--quantize bnb.nf4 uses bitsandbytes Linear4bit)", 2, "bf16",
     "litgpt/finetune/lora.py: the model is created under fabric.init_module with precision bf16-true", 2,
     "litgpt/utils.py / lightning BitsandbytesPrecision: only nn.Linear layers are converted", true,
     "bitsandbytes MatMul4Bit.forward (as hf-peft)", 0.05, "litgpt/finetune/lora.py setup(lora_dropout: float = 0.05)", false, false, 4,
     "litgpt/utils.py chunked_cross_entropy: the bf16 logits and each chunk's bf16 log-softmax: 2 + 2 B"},
    {"unsloth", "Unsloth: fused LoRA kernels, offloaded gradient checkpointing, chunked cross entropy", 4, "fp32",
     "unsloth via PEFT get_peft_model (autocast_adapter_dtype: fp32 adapters)", 2,
     "unsloth/models/llama.py: embeddings and lm_head left in the load dtype", true,
     "unsloth/kernels/fast_lora.py LoRA_MLP/LoRA_QKV.forward: ctx.save_for_backward keeps X", 0,
     "unsloth get_peft_model: lora_dropout = 0 (the fast path)", true, true, 0,
     "unsloth/kernels/fast_lora.py; unsloth/models/_utils.py Unsloth_Offloaded_Gradient_Checkpointer (use_gradient_checkpointing='unsloth'); unsloth/kernels/cross_entropy_loss.py"},
    {"axolotl", "axolotl: PEFT + bitsandbytes under a YAML config (examples/llama-3/qlora.yml)", 4, "fp32",
     "axolotl loads adapters through peft.get_peft_model (autocast_adapter_dtype: fp32 adapters)", 4,
     "axolotl/utils/models.py: prepare_model_for_kbit_training for a quantized base (fp32 upcast, as hf-peft)", true,
     "bitsandbytes MatMul4Bit.forward (as hf-peft)", 0.05, "examples/llama-3/qlora.yml: lora_dropout: 0.05", false, false, 6, "transformers' loss, as hf-peft: 2 + 4 B"},
}};

}  // namespace napkin
