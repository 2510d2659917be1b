"""Every framework snippet the advice writes names arguments and objects the installed framework has:
TrainingArguments' and Trainer's keywords in transformers, Lightning's Trainer, accelerate's
Accelerator. A renamed argument (transformers renamed evaluation_strategy to eval_strategy) fails
here, not in a user's script."""

import inspect
import re

import pytest

from gpuprof.advise import framework_terms, loader_terms
from gpuprof.advise.fixes import collate_once, eval_loader_workers

CALL = re.compile(r"\b(TrainingArguments|Trainer|Accelerator)\(\.\.\., ([^)]*)\)|\b(Accelerator|Trainer)\(([^.)][^)]*)\)")


def _keywords(text: str) -> list:
    """(callable name, keyword) pairs of the `Name(..., a=1, b=2)` calls in a snippet."""
    found = []
    for match in CALL.finditer(text):
        name, arguments = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
        found += [(name, key) for key in re.findall(r"(\w+)=", arguments)]
    return found


#: Values for the templates' fields, as a report fills them.
FIELDS = {"amp": "bf16", "k": 2, "size": 32, "gpus": 2, "script": "train.py", "lightning_precision": "bf16-mixed",
          "hf_precision": "bf16"}


def _snippets(framework: str) -> list:
    texts = [template.format(**FIELDS) for template in framework_terms.TERMS.get(framework, {}).values()]
    if framework == "transformers":
        texts += [f"TrainingArguments(..., {', '.join(f'{v}=1' for v in loader_terms.HF_ARGUMENTS.values())})",
                  collate_once.TRAINER_SNIPPET, eval_loader_workers._in_terms("transformers", 2)[1]]
    return texts


def _parameters(target) -> set:
    return set(inspect.signature(target).parameters)


@pytest.mark.parametrize("framework,module,objects", [
    ("transformers", "transformers", {"TrainingArguments": "TrainingArguments", "Trainer": "Trainer"}),
    ("lightning", "lightning", {"Trainer": "Trainer"}),
    ("accelerate", "accelerate", {"Accelerator": "Accelerator"}),
])
def test_each_keyword_in_a_frameworks_snippets_is_one_its_installed_version_takes(framework, module, objects):
    library = pytest.importorskip(module)
    pairs = [pair for text in _snippets(framework) for pair in _keywords(text)]
    assert pairs, framework
    for name, keyword in pairs:
        target = getattr(library, objects.get(name, name))
        assert keyword in _parameters(target), f"{framework}: {name}(..., {keyword}=) is no argument of {target}"


def test_the_collator_the_text_remedy_names_exists():
    transformers = pytest.importorskip("transformers")
    assert "DataCollatorWithPadding" in collate_once.TEXT_SNIPPET
    assert "tokenizer" in _parameters(transformers.DataCollatorWithPadding)
