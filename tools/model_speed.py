"""fastact.torch inside real models: transformers' BERT, GPT-2, Llama and ViT,
built from their configs (random weights, nothing downloaded), under
torch.inference_mode, float32, on --threads threads.

    python tools/model_speed.py [--threads 1] [--rounds 7] [--layers 4]

Per model and input: the activations' share of torch's forward, the
activation calls' time (torch's modules over fastact's, on the inputs they
get inside the model: > 1, fastact is faster) and the whole forward's (torch
over the same model after fastact.torch.replace_activations). Each figure is
a median over --rounds rounds, the two variants alternated in each round.
Markdown on stdout, the CPU first. Needs transformers (pip install
".[models]").
"""
import argparse
import copy
import platform
import statistics
import time

import torch
import transformers

import fastact
import fastact.torch as fat


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            fields = {}
            for line in f:
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
        return (f"{fields.get('model name', platform.machine())} (family {fields.get('cpu family', '?')}, "
                f"model {fields.get('model', '?')})")
    except OSError:
        return platform.processor() or platform.machine()


def models(layers):
    """(name, model, {input label: inputs})"""
    torch.manual_seed(0)
    text = {f"{b}x{t}": {"input_ids": torch.randint(0, 1000, (b, t))} for b, t in ((1, 128), (8, 128))}
    yield "BERT-base", transformers.BertModel(transformers.BertConfig(num_hidden_layers=layers)), text
    yield "GPT-2", transformers.GPT2Model(transformers.GPT2Config(n_layer=layers)), text
    yield ("Llama (d=1024)", transformers.LlamaModel(transformers.LlamaConfig(
        hidden_size=1024, intermediate_size=2816, num_attention_heads=16, num_key_value_heads=16,
        num_hidden_layers=layers, vocab_size=32000)), text)
    images = {f"{b}x224²": {"pixel_values": torch.randn(b, 3, 224, 224)} for b in (1, 8)}
    yield "ViT-base", transformers.ViTModel(transformers.ViTConfig(num_hidden_layers=layers)), images


def activation_inputs(model, inputs):
    """(module, input) of every activation call replace_activations would swap"""
    swapped = fat.replace_activations(copy.deepcopy(model))
    names = set(swapped)
    calls, hooks = [], []
    for name, module in model.named_modules():
        if name in names:
            hooks.append(module.register_forward_hook(lambda m, args, out: calls.append((m, args[0].clone()))))
    with torch.inference_mode():
        model(**inputs)
    for h in hooks:
        h.remove()
    return calls


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--layers", type=int, default=4, help="layers per model (the share is per layer)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    fastact.set_num_threads(args.threads)
    print(f"{cpu_name()}; torch {torch.__version__}, transformers {transformers.__version__}, fastact "
          f"{fastact.__version__} (kernels {fastact.isa()}); {args.threads} thread(s), float32, "
          f"torch.inference_mode, {args.layers} layers per model, median of {args.rounds} rounds\n")
    print("| model | input | activations swapped | activation share of torch's forward | "
          "activation calls, torch ÷ fastact | forward, torch ÷ fastact |")
    print("|---|---|---|---:|---:|---:|")
    for name, model, cases in models(args.layers):
        model.eval()
        ours = copy.deepcopy(model)
        swapped = fat.replace_activations(ours)
        kinds = ", ".join(sorted({f"{cls} ×{list(swapped.values()).count(cls)}" for cls in swapped.values()}))
        for label, inputs in cases.items():
            calls = activation_inputs(model, inputs)
            holder = torch.nn.ModuleDict({str(id(m)): copy.deepcopy(m) for m, _ in calls})
            fat.replace_activations(holder)
            replacements = {int(k): v for k, v in holder.items()}
            rows = {"act_torch": [], "act_ours": [], "fwd_torch": [], "fwd_ours": []}
            with torch.inference_mode():
                for _ in range(2):  # warm-up: allocator, thread pools, first-call costs
                    model(**inputs), ours(**inputs)
                for _ in range(args.rounds):
                    rows["act_torch"].append(sum(timed(lambda: m(x)) for m, x in calls))
                    rows["act_ours"].append(sum(timed(lambda: replacements[id(m)](x)) for m, x in calls))
                    rows["fwd_torch"].append(timed(lambda: model(**inputs)))
                    rows["fwd_ours"].append(timed(lambda: ours(**inputs)))
            med = {k: statistics.median(v) for k, v in rows.items()}
            print(f"| {name} | {label} | {kinds} | {100 * med['act_torch'] / med['fwd_torch']:.1f} % | "
                  f"{med['act_torch'] / med['act_ours']:.2f}× | {med['fwd_torch'] / med['fwd_ours']:.2f}× |")


if __name__ == "__main__":
    main()
