#!/bin/sh
# Tests of the PyTorch exporter (tools/kitsune-export): small models exported, checked by
# structure and by `kitsune info`/`predict`. Skipped (exit 0, with a notice) without torch.
# usage: sh tests/export/run-export.sh [BIN]        (from the repository root)
# KITSUNE_EXPORT_PY picks the Python (default /usr/bin/python3, Debian's python3-torch).
set -u
bin=${1:-build/kitsune}
PY=${KITSUNE_EXPORT_PY:-/usr/bin/python3}
if ! "$PY" -c 'import torch' >/dev/null 2>&1; then
    echo "SKIP export: $PY cannot import torch (Debian: apt-get install python3-torch)"
    exit 0
fi
KITSUNE_HOME=$(pwd); export KITSUNE_HOME
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL export: $*"; fail=$((fail + 1)); }
check() { # check NAME GOT WANT
    if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi
}
# js FILE EXPR...: every Python expression true on the JSON file (tests/export/check.py)
js() {
    f=$1; shift
    if out=$("$PY" tests/export/check.py "$f" "$@" 2>&1); then ok; else bad "$out"; fi
}
# export NAME MODEL ARGS...: tools/kitsune-export into $tmp/NAME.json, stderr in $tmp/NAME.err
export_ok() {
    n=$1; shift
    if "$PY" tools/kitsune-export "$@" -o "$tmp/$n.json" 2>"$tmp/$n.err"; then ok; else
        bad "export $n: exit status $?: $(cat "$tmp/$n.err")"; fi
}
info() { "$bin" info --workload "$@" --format json; }
M=tests/export/models.py
torch_major=$("$PY" -c 'import torch; print(torch.__version__.split(".")[0])')

# 1. --help
"$PY" tools/kitsune-export --help >"$tmp/help" 2>&1
check "--help exit status" $? 0
for word in --input --param --size --strict --leaf PARAMETERS MAPPING bf16 int64 conv2d; do
    grep -q -- "$word" "$tmp/help" && ok || bad "--help does not mention $word"
done

# 2. a 2-layer MLP 256 -> 512 -> 128 (biases, ReLU) at B = 64: FLOPs by hand
B=64
export_ok mlp "$M:MLP2" --input x=${B}x256 --param B=x.0
info "$tmp/mlp.json" >"$tmp/mlp.info" || bad "kitsune info mlp"
mm=$((2 * B * (256 * 512 + 512 * 128)))     # the two GEMMs
ew=$((B * 512 + B * 512 + B * 128))          # bias adds (GEMM epilogues) + ReLU, 1 FLOP each
wb=$((2 * (256 * 512 + 512 + 512 * 128 + 128)))
js "$tmp/mlp.info" "w['flops_tensor'] == $mm" "w['flops'] == $((mm + ew))" \
    "w['weight_bytes'] == $wb" "w['ops'] == 3" "w['kernels'] == 3"
js "$tmp/mlp.json" "j['params'] == {'B': $B}" "t('x')['shape'] == ['B', 256]" \
    "t('fc2')['kind'] == 'output'" "t('fc1_weight')['shape'] == [512, 256]" \
    "[o['type'] for o in ops] == ['linear', 'relu', 'linear']" \
    "all(attrs(o) == {'transpose_b': True} and len(o['inputs']) == 3 for o in of('linear'))"
# the parameter is a parameter: at B = 1000 the FLOPs scale
"$bin" info --workload "$tmp/mlp.json" --set B=1000 --format json >"$tmp/mlp1000.info"
js "$tmp/mlp1000.info" "w['flops'] == $((2 * 1000 * (256 * 512 + 512 * 128) + 1000 * 1152))"
# NAME as a function returning the module gives the same graph
export_ok mlpf "$M:mlp2" --input x=${B}x256 --param B=x.0 --name mlp
"$PY" -c 'import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); del a["source"], b["source"]; sys.exit(a != b)' \
    "$tmp/mlp.json" "$tmp/mlpf.json" && ok || bad "NAME as a function: a different graph"

# 3. a BERT-base encoder layer (explicit matmul + softmax attention), B = 2, S = 128
B=2; S=128; T=$((B * S))
export_ok bert "$M:BertLayer" --input x=${B}x${S}x768 --param B=x.0 --param S=x.1
info "$tmp/bert.json" >"$tmp/bert.info" || bad "kitsune info bert"
gemm=$((2 * T * 768 * 768 * 4 + 2 * T * 768 * 3072 * 2 + 2 * 2 * B * 12 * S * S * 64))
js "$tmp/bert.info" "w['flops_tensor'] == $gemm" "w['ops'] == 23" "w['kernels'] == 16" \
    "w['weight_bytes'] == 2 * (4 * (768 * 768 + 768) + 2 * 768 * 3072 + 3072 + 768 + 4 * 768)"
js "$tmp/bert.json" "j['params'] == {'B': $B, 'S': $S}" \
    "types['linear'] == 6 and types['layernorm'] == 2 and types['gelu'] == 1 and types['softmax'] == 1" \
    "types['matmul'] == 2 and sum(attrs(o).get('transpose_b', False) for o in of('matmul')) == 1" \
    "sorted(attrs(o)['copy'] for o in of('transpose')) == [False, False, False, True]" \
    "types['view'] == 4 and 'dropout' not in types and types['scale'] == 1" \
    "[attrs(o) for o in of('scale')] == [{'value': 0.125}]" \
    "t('softmax')['shape'] == ['B', 12, 'S', 'S']" "t('x')['shape'] == ['B', 'S', 768]"
"$bin" predict --hw a100 --workload "$tmp/bert.json" >"$tmp/bert.pred" 2>&1
check "predict bert exit status" $? 0
grep -q '^total' "$tmp/bert.pred" && ok || bad "predict bert: no total line: $(cat "$tmp/bert.pred")"
"$bin" predict --hw a100 --workload "$tmp/bert.json" --set B=8 --set S=512 >/dev/null 2>&1
check "predict bert at B=8 S=512" $? 0
if [ "$torch_major" -ge 2 ]; then   # F.scaled_dot_product_attention: one attention op
    export_ok bsdpa "$M:BertLayerSDPA" --input x=${B}x${S}x768 --param B=x.0 --param S=x.1
    js "$tmp/bsdpa.json" "types['attention'] == 1 and 'softmax' not in types and types['linear'] == 6"
    "$bin" predict --hw a100 --workload "$tmp/bsdpa.json" >/dev/null 2>&1
    check "predict bert (sdpa) exit status" $? 0
fi

# 3b. nn.MultiheadAttention, as PyTorch 2's forward runs it: torchvision's ViT block (batch
# first, need_weights=False: one packed input projection, one layout copy, fused attention, the
# heads copied back, the output projection), B = 2, S = 197; FLOPs in closed form
B=2; S=197
export_ok vit "$M:ViTBlock" --input x=${B}x${S}x192 --param B=x.0 --param S=x.1
info "$tmp/vit.json" >"$tmp/vit.info" || bad "kitsune info vit"
gemm=$((2 * B * S * 192 * 576 + 2 * B * S * 192 * 192 + 4 * B * 3 * S * S * 64 + 2 * 2 * B * S * 192 * 768))
js "$tmp/vit.info" "w['flops_tensor'] == $gemm" \
    "w['weight_bytes'] == 2 * (576 * 192 + 576 + 192 * 192 + 192 + 2 * 192 * 768 + 768 + 192 + 4 * 192)"
js "$tmp/vit.json" "types['attention'] == 1 and types['linear'] == 4 and 'softmax' not in types" \
    "sorted(attrs(o)['perm'] for o in of('transpose')) == [[1, 0, 2], [2, 0, 1, 3], [2, 0, 3, 1, 4]]" \
    "[attrs(o).get('copy', True) for o in of('transpose') if attrs(o)['perm'] == [1, 0, 2]] == [False]" \
    "types['slice'] == 3 and t(of('attention')[0]['outputs'][0])['shape'] == ['B', 3, 'S', 64]" \
    "t('x')['shape'] == ['B', 'S', 192]"
"$bin" predict --hw h200 --workload "$tmp/vit.json" --mode training >/dev/null 2>&1
check "predict vit training exit status" $? 0
# the defaults (sequence first, need_weights=True: scale, Q K^T, softmax, P V, the mean over the
# heads returned) and cross attention with kdim/vdim (three projections)
export_ok mhaw "$M:MHAWeights" --input x=64x4x128 --input mem=48x4x96
info "$tmp/mhaw.json" >"$tmp/mhaw.info" || bad "kitsune info mhaw"
gemm=$((2 * 256 * 128 * 384 + 2 * 2 * 4 * 4 * 64 * 64 * 32 + 2 * 256 * 128 * 128 \
    + 2 * 256 * 128 * 128 + 2 * 192 * 64 * 128 + 2 * 192 * 32 * 128 + 4 * 4 * 4 * 64 * 48 * 32 \
    + 2 * 256 * 128 * 128))
js "$tmp/mhaw.info" "w['flops_tensor'] == $gemm"
js "$tmp/mhaw.json" "types['attention'] == 1 and types['softmax'] == 1 and types['matmul'] == 2" \
    "types['linear'] == 6 and [attrs(o) for o in of('reduce')] == [{'op': 'mean', 'axes': [1]}]" \
    "sorted(tuple(v['shape']) for v in tensors.values() if v.get('kind') == 'output') == [(4, 64, 64), (64, 4, 128)]" \
    "len(of('scale')) == 1 and abs(attrs(of('scale')[0])['value'] - 32 ** -0.5) < 1e-12"
"$bin" predict --hw a100 --workload "$tmp/mhaw.json" >/dev/null 2>&1
check "predict mha (need_weights) exit status" $? 0
# key is value: q's projection, then k and v in one GEMM ([E, 2E] of the packed weight) and one
# layout copy of both; the packed weight's bytes once (4 x 128 x 128 x 2 B, biases 4 x 128)
export_ok xkv "$M:CrossKV" --input x=2x32x128 --input mem=2x48x128
info "$tmp/xkv.json" >"$tmp/xkv.info" || bad "kitsune info xkv"
js "$tmp/xkv.info" "w['flops_tensor'] == $((2 * 64 * 128 * 128 + 2 * 96 * 128 * 256 + 4 * 2 * 4 * 32 * 48 * 32 + 2 * 64 * 128 * 128))"
js "$tmp/xkv.json" "types['linear'] == 3 and types['attention'] == 1" \
    "sorted(t(o['outputs'][0])['shape'][0] for o in of('transpose') if attrs(o).get('copy', True)) == [1, 2, 32]"

# 3d. nn.TransformerEncoder (two pre-norm layers and a final norm, sequence first, L = 64, B = 4):
# per layer the attention's projections and core and the FFN, in closed form
export_ok enc "$M:Encoder" --input x=64x4x128
info "$tmp/enc.json" >"$tmp/enc.info" || bad "kitsune info enc"
gemm=$((2 * (2 * 256 * 128 * 384 + 4 * 4 * 4 * 64 * 64 * 32 + 2 * 256 * 128 * 128 + 2 * 2 * 256 * 128 * 512)))
js "$tmp/enc.info" "w['flops_tensor'] == $gemm"
js "$tmp/enc.json" "types['attention'] == 2 and types['linear'] == 8 and types['gelu'] == 2" \
    "types['layernorm'] == 5 and types['add'] == 4"
"$bin" predict --hw h200 --workload "$tmp/enc.json" --mode training >/dev/null 2>&1
check "predict encoder training exit status" $? 0
# 1-D convolutions as cuDNN runs them: 2-D ones over a height-1 image
export_ok tcn "$M:TCN" --input x=8x32x1000 --param B=x.0
info "$tmp/tcn.json" >"$tmp/tcn.info" || bad "kitsune info tcn"
js "$tmp/tcn.info" "w['flops_tensor'] == $((2 * 8 * 64 * 1000 * 32 * 3 + 2 * 8 * 64 * 1000 * 64 * 3))"
js "$tmp/tcn.json" "types['conv2d'] == 2 and [attrs(o)['dilation'] for o in of('conv2d')] == [[1, 1], [1, 2]]" \
    "[attrs(o)['padding'] for o in of('conv2d')] == [[0, 1], [0, 2]]"
"$bin" predict --hw a100 --workload "$tmp/tcn.json" --mode training >/dev/null 2>&1
check "predict tcn training exit status" $? 0

# group and instance norms: a layer norm over each group's channels x pixels (a [N, G, rest]
# view), then the affine as a per-channel scale and shift (batchnorm with running statistics)
export_ok gn "$M:GroupNormBlock" --input x=2x32x64x64 --param B=x.0
js "$tmp/gn.json" "types['layernorm'] == 3 and types['batchnorm'] == 1" \
    "[attrs(o) for o in of('batchnorm')] == [{'training': 0, 'axis': 1}]" \
    "sorted(t(o['outputs'][0])['shape'][1:] for o in of('layernorm')) == [[4, 65536], [8, 32768], [64, 4096]]"
"$bin" predict --hw a100 --workload "$tmp/gn.json" --mode training >/dev/null 2>&1
check "predict group norm training exit status" $? 0

# transposed convolutions: the data gradient of the convolution each inverts, the bias added
# after it; FLOPs 2 N C_in H W C_out KH KW each; in training each weight's gradient and the
# second one's input gradient once more (the input needs none): 2 F1 + 3 F2
export_ok dec "$M:Decoder" --input x=2x64x16x16 --param B=x.0
info "$tmp/dec.json" >"$tmp/dec.info" || bad "kitsune info dec"
js "$tmp/dec.info" "w['flops_tensor'] == $((2 * 2 * 64 * 16 * 16 * 32 * 16 + 2 * 2 * 32 * 32 * 32 * 16 * 9))"
js "$tmp/dec.json" "types['conv2d_dgrad'] == 2 and types['add'] == 1" \
    "t(of('conv2d_dgrad')[1]['outputs'][0])['shape'] == ['B', 16, 64, 64]"
"$bin" predict --hw a100 --workload "$tmp/dec.json" >/dev/null 2>&1
check "predict decoder exit status" $? 0
"$bin" info --workload "$tmp/dec.json" --mode training --format json >"$tmp/dect.info" ||
    bad "kitsune info dec training"
js "$tmp/dect.info" "w['flops_tensor'] == $((2 * (2 * 2 * 64 * 16 * 16 * 32 * 16) + 3 * (2 * 2 * 32 * 32 * 32 * 16 * 9)))"

# upsampling by 2: each element written 2 x 2 times (an expand between views; bilinear warned)
export_ok up "$M:UpNet" --input x=2x16x32x32 --param B=x.0
js "$tmp/up.json" "types['expand'] == 2 and types['conv2d'] == 1" \
    "[t(o['outputs'][0])['shape'] for o in of('expand')] == [['B', 16, 32, 2, 32, 2], ['B', 16, 64, 2, 64, 2]]"
grep -q 'bilinear interpolation costed as nearest' "$tmp/up.err" && ok || bad "upsample: no bilinear warning"
"$bin" predict --hw a100 --workload "$tmp/up.json" --mode training >/dev/null 2>&1
check "predict upsample training exit status" $? 0

# 3c. the other torch.nn activations: one kitsune op each; training derives their gradients
export_ok acts "$M:Activations" --input x=1024x64 --param B=x.0
js "$tmp/acts.json" "types['leaky_relu'] == 2 and types['hardtanh'] == 3 and types['hardswish'] == 2" \
    "all(types[k] == 1 for k in ('elu', 'softplus', 'mish', 'hardsigmoid'))" "types['add'] == 2"
"$bin" predict --hw a100 --workload "$tmp/acts.json" --mode training >/dev/null 2>&1
check "predict activations training exit status" $? 0

# 4. a top-k routed MoE FFN: router, softmax, topk, index_select per expert, one index_add
export_ok moe "$M:MoEFFN" --input x=64x256 --param T=x.0
js "$tmp/moe.json" "types['topk'] == 1 and types['sort'] == 1 and types['softmax'] == 1" \
    "types['index_select'] == 5 and types['index_add'] == 1 and types['linear'] == 9" \
    "'fill' not in types and types['concat'] == 1" \
    "attrs(of('topk')[0]) == {'k': 2, 'axis': 1}" \
    "[t(n)['dtype'] for n in of('topk')[0]['outputs']] == ['bf16', 'int64']" \
    "[t(n)['shape'] for n in of('topk')[0]['outputs']] == [['T', 2], ['T', 2]]" \
    "t(of('index_add')[0]['outputs'][0]) == {'shape': ['T', 256], 'dtype': 'bf16', 'kind': 'output'}" \
    "sorted(attrs(o)['end'] for o in of('slice')) == ['T', 'T*2', 'T*3/2', 'T/2']" \
    "t(of('index_select')[1]['outputs'][0])['shape'] == ['T/2', 256]"
# kitsune models it: GEMM FLOPs by hand (router T x 256 x 4; per expert two GEMMs of T/2 x 256 x
# 512), and every execution model predicts it, inference and training
T=64
moe_mm=$((2 * T * 256 * 4 + 4 * 2 * (2 * (T / 2) * 256 * 512)))
info "$tmp/moe.json" >"$tmp/moe.info" 2>&1 || bad "kitsune info moe: $(cat "$tmp/moe.info")"
js "$tmp/moe.info" "w['flops_tensor'] == $moe_mm" "w['ops'] == 32"
for mode in inference training; do
    "$bin" predict --hw a100 --workload "$tmp/moe.json" --mode $mode --exec all >"$tmp/moe.$mode" 2>&1
    check "predict moe ($mode) exit status" $? 0
    check "predict moe ($mode) totals" "$(grep -c '^total' "$tmp/moe.$mode")" 3
done
grep -q '^topk  *topk ' "$tmp/moe.inference" && grep -q '^argsort  *sort ' "$tmp/moe.inference" && ok ||
    bad "predict moe: no topk/sort kernels: $(cat "$tmp/moe.inference")"
grep -q '^topk.grad_x  *scatter ' "$tmp/moe.training" && ok || bad "predict moe training: no topk backward"
# every op type the exporter writes is in kitsune's op table: --strict rejects nothing
"$PY" tools/kitsune-export "$M:MoEFFN" --input x=64x256 --param T=x.0 --strict -q -o "$tmp/moe-strict.json" 2>"$tmp/strict.err"
check "--strict exit status" $? 0
[ -s "$tmp/moe-strict.json" ] && ok || bad "--strict wrote no file: $(cat "$tmp/strict.err")"

# 5. ResNet bottleneck blocks (conv/bn/relu; stride 2 + projection + max pool; pooled head)
export_ok rn "$M:Bottleneck" --input x=2x256x56x56 --param N=x.0 --param H=x.2 --param W=x.3
js "$tmp/rn.json" "types == Counter({'conv2d': 3, 'batchnorm': 3, 'relu': 3, 'add': 1})" \
    "[attrs(o)['padding'] for o in of('conv2d')] == [[0, 0], [1, 1], [0, 0]]" \
    "all(attrs(o)['stride'] == [1, 1] and attrs(o)['groups'] == 1 and attrs(o)['layout'] == 'nchw' for o in of('conv2d'))" \
    "all(attrs(o) == {'training': 0, 'axis': 1} and len(o['inputs']) == 3 for o in of('batchnorm'))" \
    "t('conv2_weight')['shape'] == [64, 64, 3, 3]" "t('conv1')['shape'] == ['N', 64, 'H', 'W']"
export_ok ds "$M:Downsample" --input x=2x64x32x32 --param N=x.0 --param H=x.2 --param W=x.3
js "$tmp/ds.json" "types['conv2d'] == 4 and types['batchnorm'] == 4 and types['pool2d'] == 1" \
    "attrs(op('conv2'))['stride'] == [2, 2] and t('conv2')['shape'] == ['N', 32, 'H/2', 'W/2']" \
    "attrs(op('pool')) == {'op': 'max', 'kernel': [3, 3], 'stride': [2, 2], 'padding': [1, 1]}" \
    "t('pool')['shape'] == ['N', 128, 'H/4', 'W/4'] and t('pool')['kind'] == 'output'"
export_ok rnh "$M:ResNetHead" --input x=2x256x56x56 --param N=x.0
js "$tmp/rnh.json" "attrs(op('pool')) == {'op': 'mean', 'axes': [2, 3], 'keepdim': True}" \
    "t('fc')['shape'] == ['N', 10]"
export_ok rnt "$M:Bottleneck" --input x=2x256x56x56 --param N=x.0 --train
js "$tmp/rnt.json" "all(attrs(o)['training'] == 1 for o in of('batchnorm'))"
# kitsune models the blocks: convolution FLOPs by hand at N=2, 56x56 (conv1 256->64 1x1,
# conv2 64->64 3x3, conv3 64->256 1x1: 2 N H W Cout Cin KH KW each), and every execution model
# predicts them, inference and training (conv dgrad/wgrad, batchnorm and pooling backward)
N=2; HW=$((56 * 56))
conv_mm=$((2 * N * HW * 64 * 256 + 2 * N * HW * 64 * 64 * 9 + 2 * N * HW * 256 * 64))
info "$tmp/rn.json" >"$tmp/rn.info" 2>&1 || bad "kitsune info resnet: $(cat "$tmp/rn.info")"
js "$tmp/rn.info" "w['flops_tensor'] == $conv_mm" "w['kernels'] == 10"
"$bin" info --workload "$tmp/rn.json" --mode training --format json >"$tmp/rn.tinfo" 2>&1
# training: forward + dgrad + wgrad of each conv, but no dgrad for conv1 (x needs no gradient)
js "$tmp/rn.tinfo" "w['flops_tensor'] == 3 * $conv_mm - $((2 * N * HW * 64 * 256))"
for m in rn ds rnh rnt; do
    for mode in inference training; do
        "$bin" predict --hw a100 --workload "$tmp/$m.json" --mode $mode --exec all >"$tmp/$m.$mode" 2>&1
        check "predict $m ($mode) exit status" $? 0
        check "predict $m ($mode) totals" "$(grep -c '^total' "$tmp/$m.$mode")" 3
    done
done
grep -q '^pool  *pool2d ' "$tmp/ds.inference" && grep -q '^pool.grad_x  *pool2d_backward ' "$tmp/ds.training" &&
    grep -q '^conv2.grad_w  *conv2d_wgrad ' "$tmp/rn.training" && ok ||
    bad "predict resnet blocks: missing pooling or convolution backward kernels"

# 6. unsupported operators: exit 2, one error naming the op and its line, no file written
line=$(grep -n 'torch.fft.fft(h)' $M | cut -d: -f1)
echo keep >"$tmp/spec.json"
"$PY" tools/kitsune-export "$M:Spectral" --input x=4x64 -o "$tmp/spec.json" 2>"$tmp/spec.err"
check "unsupported op exit status" $? 2
grep -q "fft" "$tmp/spec.err" && grep -q "models.py:$line" "$tmp/spec.err" && ok ||
    bad "unsupported op message: $(cat "$tmp/spec.err")"
check "unsupported op count" "$(grep -c 'models.py:[0-9]*:' "$tmp/spec.err")" 1
grep -q "1 unsupported operator" "$tmp/spec.err" && ok || bad "unsupported op summary: $(cat "$tmp/spec.err")"
check "failed export leaves the output alone" "$(cat "$tmp/spec.json")" keep
check "no temporary files left" "$(ls -a "$tmp" | grep -c '\.tmp$')" 0
"$PY" tools/kitsune-export "$M:CustomFn" --input x=4x64 -o "$tmp/cfn.json" 2>"$tmp/cfn.err"
check "custom autograd Function exit status" $? 2
grep -q "clamp" "$tmp/cfn.err" && grep -q "models.py:[0-9]" "$tmp/cfn.err" && ok ||
    bad "custom Function message: $(cat "$tmp/cfn.err")"
[ ! -e "$tmp/cfn.json" ] && ok || bad "custom Function: a file was written"

# 7. views: split (free slices, warned), transposes folded into matmuls, .contiguous() copies
export_ok views "$M:Views" --input x=2x16x64 --param B=x.0 --param S=x.1
info "$tmp/views.json" >/dev/null 2>&1 && ok || bad "kitsune info views: $(info "$tmp/views.json" 2>&1)"
js "$tmp/views.json" "types['slice'] == 5 and types['cast'] == 2 and types['concat'] == 1" \
    "[attrs(o) for o in of('transpose')] == [{'perm': [0, 1, 3, 2], 'copy': True}]" \
    "attrs(op('matmul')) == {'transpose_b': True} and op('matmul_2')['type'] == 'linear'" \
    "attrs(op('matmul_2')) == {'transpose_b': True} and op('matmul_2')['inputs'][1] == 'w'" \
    "[t(n)['dtype'] for n in ('float_1', 'mean', 'to')] == ['fp32', 'fp32', 'bf16']" \
    "t('narrow')['shape'] == ['B', 'S-1', 8] and attrs(op('getitem_4'))['end'] == 'S'"
grep -q "5 slice ops are free views in PyTorch" "$tmp/views.err" && ok || bad "free-slice warning: $(cat "$tmp/views.err")"
export_ok viewsf "$M:Views" --input x=2x16x64 --param B=x.0 --param S=x.1 --free-views
js "$tmp/viewsf.json" "all(attrs(o)['copy'] is False for o in of('slice'))"
# kitsune takes them as free views: the 5 slices launch no kernel
info "$tmp/views.json" >"$tmp/views.info"; info "$tmp/viewsf.json" >"$tmp/viewsf.info"
"$PY" -c 'import json,sys; k=[json.load(open(f))["workloads"][0]["kernels"] for f in sys.argv[1:]]; sys.exit(k[0] - k[1] != 5)' \
    "$tmp/views.info" "$tmp/viewsf.info" && ok || bad "free slices still launch kernels"

# 8. odds and ends: embedding, scatter_add of an expanded index, index_add into a live tensor,
#    baddbmm (alpha and a zero C are free), argmax/max/cumsum, dropout only in train mode
export_ok zoo "$M:Zoo" --input ids=2x8:int64 --input recv=B*S:int64 --param B=ids.0 --param S=ids.1
js "$tmp/zoo.json" "op('emb')['type'] == 'embedding' and t('ids')['dtype'] == 'int64'" \
    "attrs(op('emb')) == {'sparse_grad': 1}" \
    "op('scatter_add')['inputs'] == ['view', 'recv'] and t('scatter_add')['shape'] == [16, 64]" \
    "op('index_add_acc')['type'] == 'add' and types['index_add'] == 1" \
    "op('baddbmm')['type'] == 'matmul' and attrs(op('baddbmm')) == {'transpose_b': True}" \
    "types['argmax'] == 1 and types['cumsum'] == 1 and 'fill' not in types and 'dropout' not in types" \
    "attrs(op('gelu')) == {'approximate': 'tanh'} and t('recv')['shape'] == ['B*S']"
export_ok zoot "$M:Zoo" --input ids=2x8:int64 --input recv=B*S:int64 --param B=ids.0 --param S=ids.1 --train
js "$tmp/zoot.json" "attrs(op('drop')) == {'p_permille': 250}" \
    "[t(n)['dtype'] for n in op('drop')['outputs']] == ['bf16', 'bool']"
for mode in inference training; do   # argmax, cumsum, dropout (its backward reads the mask)
    "$bin" predict --hw a100 --workload "$tmp/zoot.json" --mode $mode --exec all >"$tmp/zoot.$mode" 2>&1
    check "predict zoo --train ($mode) exit status" $? 0
done
grep -q '^drop.grad_x  *mul ' "$tmp/zoot.training" && grep -q '^cumsum.grad_x.cumsum  *cumsum ' "$tmp/zoot.training" &&
    ok || bad "predict zoo training: no dropout/cumsum backward: $(cat "$tmp/zoot.training")"
# nn.Embedding(sparse=True): the table's gradient is the looked-up rows, no embedding_backward
grep -q '^emb.grad_w.values  *view ' "$tmp/zoot.training" && ! grep -q 'embedding_backward' "$tmp/zoot.training" &&
    ok || bad "predict zoo training: the sparse embedding gradient: $(cat "$tmp/zoot.training")"

# addmm/baddbmm with a live C: one GEMM each, C read in the epilogue (addmm with a [N] bias and a
# [K, N] weight folds into linear); FLOPs by hand: 2*4*64*64 + 2*2*8*8*64 tensor, one add per
# output element (4*64 + 2*8*8)
export_ok addmm "$M:AddMM" --input x=4x64 --input q=2x8x64 --input s=2x8x8
js "$tmp/addmm.json" "op('baddbmm')['type'] == 'matmul' and op('baddbmm')['inputs'] == ['q', 'q', 's']" \
    "'add' not in types and op('addmm')['inputs'] == ['x', 'w', 'c']"
info "$tmp/addmm.json" >"$tmp/addmm.info"
js "$tmp/addmm.info" "w['flops_tensor'] == $((2 * 4 * 64 * 64 + 2 * 2 * 8 * 8 * 64))" \
    "w['flops_simt'] == $((4 * 64 + 2 * 8 * 8))"
"$bin" predict --hw a100 --workload "$tmp/addmm.json" --mode training >/dev/null 2>&1
check "predict addmm (training) exit status" $? 0

# 9. bad command lines: exit status 2
"$PY" tools/kitsune-export "$M:MLP2" -o "$tmp/x.json" 2>/dev/null
check "no --input" $? 2
"$PY" tools/kitsune-export "$M:NoSuchModel" --input x=4x256 -o "$tmp/x.json" 2>/dev/null
check "unknown NAME" $? 2
"$PY" tools/kitsune-export "$M:MLP2" --input y=4x256 -o "$tmp/x.json" 2>/dev/null
check "--input that forward() does not take" $? 2
"$PY" tools/kitsune-export "$M:MLP2" --input x=4x256 -o "$tmp/nodir/x.json" 2>/dev/null
check "-o into a missing directory" $? 2
"$PY" tools/kitsune-export "$M:MLP2" --input x=4x255 -o "$tmp/x.json" 2>"$tmp/shape.err"
check "shape error exit status" $? 2
grep -q "models.py:[0-9]* (node fc1)" "$tmp/shape.err" && ok || bad "shape error message: $(cat "$tmp/shape.err")"

# 10. the shipped applications (hw/calibrate/apps/models.py): exported at small batch sizes,
#     compared with the shipped JSON under `kitsune info` at the default parameters
if [ -f hw/calibrate/apps/models.py ]; then
    for app in nerf dlrm mgn graphcast llama3-8b-ctx llama3-8b-tok; do
        [ -f "workloads/$app.json" ] || continue
        fn=$(echo "$app" | tr - _)
        if ! args=$("$PY" tests/export/apps.py args "$app" 2>"$tmp/app.err"); then
            bad "apps.py args $app: $(cat "$tmp/app.err")"; continue
        fi
        sets=$("$PY" tests/export/apps.py sets "$app" | tr '\n' ' ')
        set -f; oldifs=$IFS; IFS='
'
        # shellcheck disable=SC2086
        set -- $args
        IFS=$oldifs; set +f
        if ! "$PY" tools/kitsune-export "tests/export/apps.py:$fn" "$@" -q -o "$tmp/app-$app.json" 2>"$tmp/app.err"; then
            bad "export $app: $(cat "$tmp/app.err")"; continue
        fi
        # shellcheck disable=SC2086
        "$bin" info --workload "$tmp/app-$app.json" $sets --format json >"$tmp/app-$app.info" 2>&1 ||
            { bad "kitsune info exported $app: $(cat "$tmp/app-$app.info")"; continue; }
        info "workloads/$app.json" >"$tmp/ref-$app.info"
        "$PY" - "$tmp/app-$app.info" "$tmp/ref-$app.info" "$app" <<'EOF' && ok || bad "app $app differs from workloads/$app.json"
import json, sys
a, r = (json.load(open(f))["workloads"][0] for f in sys.argv[1:3])
bad = [k for k in ("flops", "flops_tensor", "weight_bytes", "ops", "kernels") if a[k] != r[k]]
for k in bad:
    print("  %s %s: exported %s, shipped %s" % (sys.argv[3], k, a[k], r[k]))
sys.exit(1 if bad else 0)
EOF
    done
else
    echo "SKIP export: hw/calibrate/apps/models.py absent (the shipped applications in PyTorch)"
fi

echo "export: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
