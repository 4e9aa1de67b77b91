"""PyTorch models that tests/export/run-export.sh exports with tools/kitsune-export.

Every class here is constructible without arguments (the exporter's FILE.py:NAME contract).
They run on torch 1.13 (Debian's python3-torch) and on torch 2.x.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

HAS_SDPA = hasattr(F, "scaled_dot_product_attention")


class MLP2(nn.Module):
    """2-layer MLP: 256 -> 512 (ReLU) -> 128, with biases. The test counts its FLOPs by hand."""

    def __init__(self, d_in=256, d_hidden=512, d_out=128):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(d_hidden, d_out)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class BertLayer(nn.Module):
    """A BERT-base encoder layer (post-LN): self-attention with explicit matmul + softmax (as
    HF's eager BertSelfAttention), residual + LayerNorm, GELU FFN, residual + LayerNorm.
    Dropout layers are there (p = 0.1) and vanish in eval mode."""

    def __init__(self, d=768, heads=12, ffn=3072, p=0.1):
        super().__init__()
        self.h = heads
        self.dh = d // heads
        self.query = nn.Linear(d, d)
        self.key = nn.Linear(d, d)
        self.value = nn.Linear(d, d)
        self.attn_drop = nn.Dropout(p)
        self.out = nn.Linear(d, d)
        self.out_drop = nn.Dropout(p)
        self.ln1 = nn.LayerNorm(d, eps=1e-12)
        self.fc1 = nn.Linear(d, ffn)
        self.fc2 = nn.Linear(ffn, d)
        self.ffn_drop = nn.Dropout(p)
        self.ln2 = nn.LayerNorm(d, eps=1e-12)

    def heads(self, t):
        b, s, _ = t.shape
        return t.view(b, s, self.h, self.dh).permute(0, 2, 1, 3)

    def attention(self, q, k, v):
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dh)
        probs = self.attn_drop(F.softmax(scores, dim=-1))
        return torch.matmul(probs, v)

    def forward(self, x):
        b, s, d = x.shape
        q = self.heads(self.query(x))
        k = self.heads(self.key(x))
        v = self.heads(self.value(x))
        ctx = self.attention(q, k, v)
        ctx = ctx.permute(0, 2, 1, 3).contiguous().view(b, s, d)
        h = self.ln1(x + self.out_drop(self.out(ctx)))
        f = self.fc2(F.gelu(self.fc1(h)))
        return self.ln2(h + self.ffn_drop(f))


class BertLayerSDPA(BertLayer):
    """The same layer with F.scaled_dot_product_attention (torch >= 2.0): one attention op."""

    def attention(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v)


class ViTBlock(nn.Module):
    """torchvision's ViT encoder block: nn.MultiheadAttention (batch_first, need_weights=False)
    between two layer norms, a GELU MLP."""

    def __init__(self, d=192, h=3, f=768):
        super().__init__()
        self.ln1 = nn.LayerNorm(d, eps=1e-6)
        self.sa = nn.MultiheadAttention(d, h, batch_first=True)
        self.ln2 = nn.LayerNorm(d, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(d, f), nn.GELU(), nn.Linear(f, d))

    def forward(self, x):
        h = self.ln1(x)
        h, _ = self.sa(h, h, h, need_weights=False)
        x = x + h
        return x + self.mlp(self.ln2(x))


class MHAWeights(nn.Module):
    """nn.MultiheadAttention's defaults (sequence-first, need_weights=True), the averaged
    attention weights returned too; and cross attention with other key/value widths."""

    def __init__(self):
        super().__init__()
        self.sa = nn.MultiheadAttention(128, 4)
        self.xa = nn.MultiheadAttention(128, 4, kdim=64, vdim=32)

    def forward(self, x, mem):
        y, w = self.sa(x, x, x)
        z, _ = self.xa(y, mem[..., :64], mem[..., 64:], need_weights=False)
        return z, w


class Encoder(nn.Module):
    """nn.TransformerEncoder: two pre-norm layers (GELU) with a final norm, sequence first."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(128, 4, 512, activation="gelu", norm_first=True)
        self.enc = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(128))

    def forward(self, x):
        return self.enc(x)


class TCN(nn.Module):
    """1-D convolutions (a dilated temporal block): conv1d, batchnorm, relu."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(32, 64, 3, padding=1)
        self.bn = nn.BatchNorm1d(64)
        self.c2 = nn.Conv1d(64, 64, 3, padding=2, dilation=2, bias=False)

    def forward(self, x):
        return self.c2(F.relu(self.bn(self.c1(x))))


class GroupNormBlock(nn.Module):
    """A diffusion-UNet style block: conv, GroupNorm, SiLU; an instance norm and a functional
    group norm without affine."""

    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(32, 64, 3, padding=1)
        self.gn = nn.GroupNorm(8, 64)
        self.inorm = nn.InstanceNorm2d(64)

    def forward(self, x):
        h = F.silu(self.gn(self.c(x)))
        return self.inorm(h) + F.group_norm(h, 4)


class Decoder(nn.Module):
    """A GAN/UNet decoder: transposed convolutions (one with output_padding, one without bias)."""

    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d(64, 32, 4, stride=2, padding=1)
        self.up2 = nn.ConvTranspose2d(32, 16, 3, stride=2, padding=1, output_padding=1, bias=False)

    def forward(self, x):
        return self.up2(F.relu(self.up(x)))


class UpNet(nn.Module):
    """Upsampling: nn.Upsample (nearest) and F.interpolate (bilinear) by 2."""

    def __init__(self):
        super().__init__()
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.c = nn.Conv2d(16, 16, 3, padding=1)

    def forward(self, x):
        return F.interpolate(self.c(self.up(x)), scale_factor=2, mode="bilinear", align_corners=False)


class Activations(nn.Module):
    """torch.nn's other activations, as modules and as functions (relu6 is a hardtanh)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 64)
        self.acts = nn.ModuleList([nn.LeakyReLU(0.2), nn.ELU(), nn.Softplus(), nn.Mish(),
                                   nn.Hardswish(), nn.Hardsigmoid(), nn.Hardtanh(), nn.ReLU6()])

    def forward(self, x):
        h = self.fc(x)
        for a in self.acts:
            h = a(h)
        return F.leaky_relu(h, 0.1) + F.relu6(h) + F.hardswish(h)


class CrossKV(nn.Module):
    """Cross attention over one memory tensor (key is value): PyTorch projects q, then k and v
    with one GEMM of the packed weight's last two thirds."""

    def __init__(self):
        super().__init__()
        self.xa = nn.MultiheadAttention(128, 4, batch_first=True)

    def forward(self, x, mem):
        return self.xa(x, mem, mem, need_weights=False)[0]


class Expert(nn.Module):
    def __init__(self, d, f):
        super().__init__()
        self.w1 = nn.Linear(d, f, bias=False)
        self.w2 = nn.Linear(f, d, bias=False)

    def forward(self, x):
        return self.w2(F.gelu(self.w1(x)))


class MoEFFN(nn.Module):
    """Top-k routed mixture-of-experts FFN over T tokens [T, D]: router linear, softmax, top-k,
    tokens grouped per expert (argsort of the expert choices), gathered with index_select, each
    expert's FFN on its C = T*k/E tokens, outputs weighted by the routing probability and added
    back to their tokens with one index_add. The static capacity C assumes balanced routing
    (every expert gets exactly T*k/E of the token slots), as capacity-factor-1 MoE layers do."""

    def __init__(self, d=256, f=512, experts=4, k=2):
        super().__init__()
        self.e = experts
        self.k = k
        self.router = nn.Linear(d, experts, bias=False)
        self.experts = nn.ModuleList([Expert(d, f) for _ in range(experts)])

    def forward(self, x):
        t, d = x.shape
        probs = F.softmax(self.router(x), dim=-1)
        w, sel = torch.topk(probs, self.k, dim=-1)          # [T, k] weights, expert ids
        order = torch.argsort(sel.flatten())                 # slots grouped by expert
        tok = torch.div(order, self.k, rounding_mode="floor")  # token of each slot
        gate = w.flatten().index_select(0, order)            # routing weight of each slot
        cap = t * self.k // self.e
        ys = []
        for i, expert in enumerate(self.experts):
            idx = tok[i * cap:(i + 1) * cap]
            ys.append(expert(x.index_select(0, idx)))
        y = torch.cat(ys, dim=0) * gate.unsqueeze(-1)
        return torch.zeros_like(x).index_add(0, tok, y)


class Bottleneck(nn.Module):
    """ResNet-50 bottleneck block (conv1x1-bn-relu, conv3x3-bn-relu, conv1x1-bn, identity
    shortcut, relu), torchvision's layout: stage-1 widths 256 -> 64 -> 256."""

    def __init__(self, c=256, mid=64):
        super().__init__()
        self.conv1 = nn.Conv2d(c, mid, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(mid)
        self.conv2 = nn.Conv2d(mid, mid, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(mid)
        self.conv3 = nn.Conv2d(mid, c, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(c)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + x)


class ResNetHead(nn.Module):
    """Bottleneck + global average pooling + classifier (pooling and flatten mapping)."""

    def __init__(self, c=256, classes=10):
        super().__init__()
        self.block = Bottleneck(c)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(c, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.block(x)), 1))


class Downsample(nn.Module):
    """ResNet bottleneck with stride 2 and a projection shortcut (conv1x1 stride 2 + bn), then
    max pooling: output sizes H/2, W/2 and H/4, W/4 of the input's H, W."""

    def __init__(self, c=64, mid=32, out=128):
        super().__init__()
        self.conv1 = nn.Conv2d(c, mid, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(mid)
        self.conv2 = nn.Conv2d(mid, mid, 3, stride=2, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(mid)
        self.conv3 = nn.Conv2d(mid, out, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out)
        self.proj = nn.Sequential(nn.Conv2d(c, out, 1, stride=2, bias=False), nn.BatchNorm2d(out))
        self.pool = nn.MaxPool2d(3, stride=2, padding=1)

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        h = F.relu(self.bn2(self.conv2(h)))
        h = self.bn3(self.conv3(h))
        return self.pool(F.relu(h + self.proj(x)))


class Zoo(nn.Module):
    """Odds and ends: an embedding lookup (sparse gradient), a scatter_add with an expanded
    index (the torch_scatter idiom) into a zero tensor, an index_add into a live tensor,
    baddbmm, cumsum, argmax, max over a dim, tanh-GELU and dropout (a dropout op in --train
    mode)."""

    def __init__(self, vocab=1000, d=64, rows=16):
        super().__init__()
        self.rows = rows
        self.emb = nn.Embedding(vocab, d, sparse=True)
        self.fc = nn.Linear(d, d)
        self.drop = nn.Dropout(0.25)

    def forward(self, ids, recv):                    # ids [B, S], recv [B*S] (rows < 16)
        h = self.emb(ids)                            # [B, S, D]
        b, s, d = h.shape
        flat = h.view(b * s, d)
        idx = recv.view(-1, 1).expand_as(flat)
        agg = flat.new_zeros(self.rows, d).scatter_add(0, idx, flat)     # [rows, D]
        acc = flat.index_add(0, recv, self.drop(F.gelu(self.fc(flat), approximate="tanh")))
        att = torch.baddbmm(h.new_zeros(b, s, s), h, h.transpose(1, 2), alpha=0.125)
        best = att.argmax(dim=-1)                    # [B, S] int64
        top = att.max(dim=-1).values                 # [B, S]
        run = torch.cumsum(top, dim=1)
        return agg, acc, best, run


class Spectral(nn.Module):
    """Uses torch.fft.fft, which kitsune has no operator for: the export must fail (exit 2)."""

    def __init__(self, d=64):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        h = self.fc(x)
        s = torch.fft.fft(h)
        return h + s.real


class _Clamp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clamp(min=0.0)

    @staticmethod
    def backward(ctx, g):
        return g


class CustomFn(nn.Module):
    """A custom autograd Function: no kitsune equivalent either."""

    def __init__(self, d=64):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return _Clamp.apply(self.fc(x))


class Views(nn.Module):
    """Exercise views: split (free), chunk, narrow, expand, transposes folded into matmuls,
    .contiguous() copies, casts, scalars, reductions and stacking."""

    def __init__(self, d=64):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.w = nn.Parameter(torch.randn(d, d))

    def forward(self, x):                        # x [B, S, D]
        q, k, v = self.qkv(x).split(x.shape[-1], dim=-1)
        a = torch.softmax(q @ k.transpose(1, 2) * 0.125, dim=-1)   # transpose folds: transpose_b
        o = (a @ v) @ self.w.t()                 # 2-D right operand: linear, transpose_b
        m = o.float().mean(-1, keepdim=True).to(x.dtype)
        c = torch.stack([o, o - m], dim=1)       # [B, 2, S, D]
        t = c.transpose(2, 3).contiguous()       # a copied transpose
        return t.sum(1) + 1.0, x[:, 1:, :].narrow(2, 0, 8)


def mlp2():
    """A function returning a module (the other NAME form)."""
    return MLP2()


def bert_base_layer():
    return BertLayerSDPA() if HAS_SDPA else BertLayer()


class AddMM(nn.Module):
    """torch.addmm and torch.baddbmm with a live C: one matmul each, C its third input."""

    def __init__(self, d=64):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d, d))
        self.c = nn.Parameter(torch.randn(d))

    def forward(self, x, q, s):                  # x [B, D], q [B, S, D], s [B, S, S]
        return torch.addmm(self.c, x, self.w), torch.baddbmm(s, q, q.transpose(1, 2))
