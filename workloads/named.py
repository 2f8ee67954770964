"""Workloads named beyond the registry: any classifier a library or the user's own code can build.

    torchvision:NAME      torchvision.models.get_model(NAME, weights=None, num_classes=...)
    timm:NAME             timm.create_model(NAME, pretrained=False, num_classes=...)  (the `timm` extra)
    hf:CONFIG             a causal language model from a Hugging Face config (workloads/hf.py, the `hf` extra)
    module.path:factory   a callable in the user's code returning an nn.Module (or a whole Workload)
    NAME                  an entry point of the `suite.workloads` group, installed by a package

No weights are ever downloaded: every model starts from its random initialisation. A model trains with the
registry's ResNet recipe (SGD, cross-entropy, labels from the data); a factory that returns a `Workload`
defines its own step. Everything is checked while the run is planned, on the meta device (shapes without
memory), so a bad name, a broken factory or an impossible size is one clear line before anything is built.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib
import inspect
import os
import sys
from dataclasses import dataclass

import torch
from torch import nn

from suite.inputs.errors import UserError, near

from . import installed
from . import user_code as guard
from .base import Workload, count_parameters
from .classifier import EXPECTED_OUTPUT, ClassifierTraining, describe_output, logits  # the registry's step

DEFAULT_IMAGE_SIZE = 224  # the ImageNet crop most classifiers are built for
DEFAULT_NUM_CLASSES = 1000
DEFAULT_BATCH_SIZE = 64
TIMM_MISSING = "needs timm, an optional extra: pip install 'suite[timm]' (or pip install timm)"


# -- the libraries ------------------------------------------------------------------------------------


def torchvision_names() -> list[str]:
    import torchvision

    return torchvision.models.list_models(module=torchvision.models)  # classifiers only


def import_timm():
    try:
        import timm
    except ImportError:
        raise UserError(f"timm: model names {TIMM_MISSING}") from None
    return timm


def timm_names(pattern: str | None = None) -> list[str]:
    return import_timm().list_models(pattern or "")


def _torchvision_default_size(name: str) -> int:
    """The crop its published weights were trained at (inception_v3: 299), else 224."""
    from torchvision.models import get_model_weights

    try:
        weights = list(get_model_weights(name))
        return int(weights[0].transforms.keywords.get("crop_size", DEFAULT_IMAGE_SIZE))
    except (ValueError, IndexError, AttributeError, TypeError):
        return DEFAULT_IMAGE_SIZE


def _timm_cfg(name: str):
    from timm.models import get_pretrained_cfg

    return get_pretrained_cfg(name)


def build_model(source: str, model: str, num_classes: int, image_size: int, size_given: bool) -> nn.Module:
    """One model, randomly initialised, on the current default device."""
    if source == "torchvision":
        from torchvision.models import get_model

        if size_given:
            try:  # the vision transformers take their input size; size-agnostic models refuse the keyword
                return get_model(model, weights=None, num_classes=num_classes, image_size=image_size)
            except TypeError as error:
                if "image_size" not in str(error):
                    raise
        return get_model(model, weights=None, num_classes=num_classes)
    if source == "timm":
        timm = import_timm()
        extra = {}
        cfg = _timm_cfg(model)
        if size_given and cfg is not None and getattr(cfg, "fixed_input_size", False):
            extra["img_size"] = image_size  # e.g. ViTs: position embeddings are sized for one input
        return timm.create_model(model, pretrained=False, num_classes=num_classes, **extra)
    return _call_factory(model, num_classes=num_classes, image_size=image_size)


# -- user factories and entry points ------------------------------------------------------------------


@contextlib.contextmanager
def user_code(what: str):
    """Run a person's code (importing their module, calling their factory, a forward): whatever it raises,
    a sys.exit(), a GeneratorExit or any other BaseException too, becomes one UserError naming WHAT, so it
    cannot end the suite with their exit status and nothing said. KeyboardInterrupt still stops the suite;
    os._exit() cannot be caught by any Python code. A copy of the process that the code forked ends here,
    and the suite's own variables it changed are put back (workloads/user_code.py)."""
    pid = os.getpid()
    try:
        yield
    except (UserError, KeyboardInterrupt):
        raise
    except SystemExit as stop:
        raise UserError(
            f"{what} called sys.exit({stop.code!r}): code the suite runs must return or raise, not end the process"
        ) from None
    except BaseException as error:  # noqa: BLE001 - the user's code: its failure is the person's to fix
        raise UserError(f"{what} raised {type(error).__name__}: {_first_line(error)}") from None
    finally:
        guard.end_if_a_copy(pid)  # only the process that started the run goes on
        guard.restore_environment()


def load_factory(path: str):
    """`package.module:callable` -> the callable, or one line saying what is wrong with the path."""
    module_name, _, attribute = path.partition(":")
    # `python -m` puts the current folder on the path but the `suite` script does not: a person's own
    # module next to them should import either way.
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    with user_code(f"workload {path!r}: importing {module_name!r}"):
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            raise UserError(
                f"workload {path!r}: cannot import module {module_name!r} ({error}); "
                "a factory is named module.path:callable and its module must be importable (the current folder or PYTHONPATH)"
            ) from None
    factory = getattr(module, attribute, None)
    if factory is None:
        public = [n for n in dir(module) if not n.startswith("_") and callable(getattr(module, n))]
        close = difflib.get_close_matches(attribute, public, n=5, cutoff=0.6)
        raise UserError(
            f"workload {path!r}: module {module_name!r} has no callable {attribute!r}"
            + (f" (near: {', '.join(close)})" if close else "")
        )
    if not callable(factory):
        raise UserError(f"workload {path!r}: {attribute} is a {type(factory).__name__}, not a callable")
    return factory


def _call_factory(path: str, **offered):
    """Call the factory with the keywords it accepts (num_classes, image_size), and nothing else."""
    factory = load_factory(path)
    try:
        parameters = inspect.signature(factory).parameters
        takes_any = any(p.kind is p.VAR_KEYWORD for p in parameters.values())
        kwargs = {k: v for k, v in offered.items() if takes_any or k in parameters}
    except (TypeError, ValueError):  # a builtin or C callable without a signature
        kwargs = {}
    with user_code(f"workload {path!r}: the factory"):
        made = factory(**kwargs)
    if not isinstance(made, (nn.Module, Workload)):
        raise UserError(
            f"workload {path!r}: the factory returned a {type(made).__name__}; "
            "it must return a torch.nn.Module or a suite Workload"
        )
    return made


def read_model_list(path: str) -> list[str]:
    """`--model-list FILE`: one workload name per line (as timm's benchmark.py takes), # for comments."""
    from suite.inputs.files import read_user_file  # regular files only, bounded: a FIFO never blocks

    lines = read_user_file(path, "--model-list").splitlines()
    names = [line.split("#", 1)[0].strip() for line in lines]
    names = list(dict.fromkeys(name for name in names if name))  # in order, each once
    if not names:
        raise UserError(f"--model-list {path!r} names no workload (one name per line)")
    return names


# -- the workload -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NamedClassifier(Workload):
    source: str = "torchvision"  # torchvision | timm | factory
    model: str = ""  # the library's model name, or the factory's module.path:callable
    size_given: bool = False  # --image-size asked: passed to models whose input size is fixed
    library_version: str | None = None

    # The library and model are the workload's name (`torchvision:NAME`): name another to change them.
    identity_fields = (*Workload.identity_fields, "source", "model", "size_given", "library_version")

    def build_modules(self, device="cpu"):
        with torch.device(device):
            model = build_model(self.source, self.model, self.num_classes, self.image_size, self.size_given)
        if not isinstance(model, nn.Module):
            raise UserError(f"workload {self.name!r}: the factory must return an nn.Module here")
        return {"model": model}

    def build(self, backend) -> ClassifierTraining:
        from .resnet import SGD

        model = backend.prepare_model(self.build_modules()["model"])
        return ClassifierTraining(
            backend, {"model": model}, {"model": backend.make_optimizer(model.parameters(), "sgd", **SGD)}
        )

    def with_shape(self, num_classes=None, image_size=None) -> Workload:
        changes = {}
        if num_classes is not None:
            changes["num_classes"] = num_classes
        if image_size is not None:
            changes.update(image_size=image_size, size_given=True)
        return self.with_overrides(**changes) if changes else self

    def check_data_classes(self, classes: int, where: str, head_asked: bool = False) -> None:
        super().check_data_classes(classes, where, head_asked=True)  # no registry head to fall back on

    def provenance(self) -> dict:
        return {
            **super().provenance(),
            "source": self.source,
            "model": self.model,
            "library_version": self.library_version,
            "num_classes": self.num_classes,
        }


def _library_version(source: str) -> str | None:
    module = {"torchvision": "torchvision", "timm": "timm"}.get(source)
    return importlib.import_module(module).__version__ if module else None


def resolve(name: str, num_classes: int | None, image_size: int | None) -> Workload | None:
    """A workload for `name` if it is one of the named kinds; None if it is none of them."""
    if name.startswith("torchvision:"):
        model = name.split(":", 1)[1]
        if model not in torchvision_names():
            raise near(model, torchvision_names(), "torchvision model", "suite list --models torchvision")
        default_size = _torchvision_default_size(model)
        return _checked(name, "torchvision", model, num_classes, image_size, default_size)
    if name.startswith("timm:"):
        model = name.split(":", 1)[1]
        if not import_timm().is_model(model):
            raise near(model, timm_names(), "timm model", "suite list --models timm")
        cfg = _timm_cfg(model)
        default_size = int(cfg.input_size[-1]) if cfg is not None and cfg.input_size else DEFAULT_IMAGE_SIZE
        return _checked(name, "timm", model, num_classes, image_size, default_size)
    if name.startswith("hf:"):  # a language model from a Hugging Face config (workloads/hf.py)
        from . import hf

        return hf.resolve(name.split(":", 1)[1], name).with_shape(
            num_classes=num_classes, image_size=image_size
        )
    points = installed.entry_points()
    if name in points:
        return _from_factory(name, points[name], num_classes, image_size)
    if ":" in name:
        return _from_factory(name, name, num_classes, image_size)
    return None


def _default_argument(path: str, name: str):
    try:
        parameter = inspect.signature(load_factory(path)).parameters.get(name)
    except (TypeError, ValueError):
        return None
    if parameter is None or parameter.default is inspect.Parameter.empty:
        return None
    return parameter.default


def _from_factory(name: str, path: str, num_classes, image_size) -> Workload:
    # Only what was asked is offered: a factory's own defaults (its head, its input size) stand otherwise.
    size = image_size or _default_argument(path, "image_size") or DEFAULT_IMAGE_SIZE
    offered = {"image_size": size, **({"num_classes": num_classes} if num_classes else {})}
    with torch.device("meta"):
        made = _call_factory(path, **offered)
    if isinstance(made, Workload):  # it defines its own modules and step
        return made.with_shape(num_classes=num_classes, image_size=image_size)
    # The module's head decides its classes: read them off a forward.
    classes = _output_classes(name, made, size)
    if num_classes is not None and classes is not None and classes != num_classes:
        raise UserError(
            f"workload {name!r} has a {classes}-class head and its factory takes no num_classes: "
            f"--num-classes {num_classes} cannot be honoured (drop it, or give the factory a num_classes argument)"
        )
    return NamedClassifier(
        name,
        f"{path} (your factory)",
        image_size=size,
        default_batch_size=DEFAULT_BATCH_SIZE,
        num_classes=classes or num_classes or DEFAULT_NUM_CLASSES,
        source="factory",
        model=path,
        size_given=True,  # the factory is always offered the size it is built at
    )


def _checked(name, source, model, num_classes, image_size, default_size) -> Workload:
    workload = NamedClassifier(
        name,
        f"{source} {model}, random init",
        image_size=image_size or default_size,
        default_batch_size=DEFAULT_BATCH_SIZE,
        num_classes=num_classes or DEFAULT_NUM_CLASSES,
        source=source,
        model=model,
        size_given=image_size is not None,
        library_version=_library_version(source),
    )
    try:
        module = workload.build_modules(device="meta")["model"]
    except UserError:
        raise
    except Exception as error:  # noqa: BLE001 - e.g. a ViT asked for a size its patches do not divide
        raise UserError(
            f"workload {name!r} cannot be built at {workload.image_size} px with {workload.num_classes} "
            f"classes: {type(error).__name__}: {_first_line(error)}"
        ) from None
    _output_classes(name, module, workload.image_size)
    return workload


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _output_classes(name: str, module: nn.Module, image_size: int) -> int | None:
    """One forward on the meta device (shapes only, no arithmetic): the model must take this size and
    return what the classifier step trains on. Everything that would make the run fail on its first step
    (or train nothing) is refused here, in planning. None: an operator without a meta kernel, so the
    output is checked when the run builds the model."""
    with torch.device("meta"), user_code(f"workload {name!r}: its forward"):  # sys.exit() in it too
        try:
            output = module(torch.empty(2, 3, image_size, image_size))
        except NotImplementedError:
            return None
        except Exception as error:  # noqa: BLE001 - a model that refuses the input size
            raise UserError(
                f"workload {name!r} does not take {image_size} px images: {type(error).__name__}: "
                f"{_first_line(error)} (choose another --image-size)"
            ) from None
    if count_parameters(module) == 0:  # after the forward, which sizes lazy layers
        raise UserError(
            f"workload {name!r} has no trainable parameters (all frozen, or none at all): nothing to train"
        )
    try:
        output = logits(output)
    except TypeError:
        raise UserError(
            f"workload {name!r} returns {describe_output(output)}: the suite trains on {EXPECTED_OUTPUT} "
            "(return the logits alone, or return a suite Workload that defines its own step)"
        ) from None
    if output.dim() != 2:
        raise UserError(
            f"workload {name!r} returns a {tuple(output.shape)} output, not (batch, classes) logits: "
            "only classifiers can be named this way (return a Workload for anything else)"
        )
    if not output.dtype.is_floating_point:
        raise UserError(
            f"workload {name!r} returns {str(output.dtype).removeprefix('torch.')} logits: cross-entropy "
            "needs floating-point logits (drop the cast at the end of forward)"
        )
    if output.shape[1] < 2:
        raise UserError(
            f"workload {name!r} has a {output.shape[1]}-class head: a classifier needs at least 2 classes"
        )
    return int(output.shape[1])
