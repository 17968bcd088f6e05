"""A PyTorchTrial as Determined's examples wrote it before 0.38, run by the legacy entrypoint
`model_def:MNistTrial`: built from its context alone (hyperparameters from context.get_hparam,
the batch size from the experiment's global_batch_size), with the training length and periods
taken from the experiment config by Determined's harness. It trains the network of Determined's
mnist_pytorch tutorial (model.py and data.py, beside it in the test's copy of the tutorial).
"""
import pathlib
from typing import Any, Dict

import data
import model
import torch
from torch import nn

import determined as det
from determined import pytorch


class MNistTrial(pytorch.PyTorchTrial):
    def __init__(self, context: pytorch.PyTorchTrialContext) -> None:
        self.context = context
        # Where the master says this run starts (trial.json's steps_completed): the batches of
        # the checkpoint it restores, from which the Trainer counts its periods. For the tests.
        info = det.get_cluster_info()
        print(f"starting at steps_completed={info.trial._steps_completed}", flush=True)
        self.loss_fn = nn.NLLLoss()
        self.model = context.wrap_model(model.build_model(hparams=context.get_hparams()))
        self.optimizer = context.wrap_optimizer(
            torch.optim.Adadelta(self.model.parameters(), lr=context.get_hparam("learning_rate"))
        )

    def build_training_data_loader(self) -> pytorch.DataLoader:
        dataset = data.get_dataset(pathlib.Path("data"), train=True)
        return pytorch.DataLoader(dataset, batch_size=self.context.get_per_slot_batch_size())

    def build_validation_data_loader(self) -> pytorch.DataLoader:
        dataset = data.get_dataset(pathlib.Path("data"), train=False)
        return pytorch.DataLoader(dataset, batch_size=self.context.get_per_slot_batch_size())

    def train_batch(self, batch: pytorch.TorchData, epoch_idx: int, batch_idx: int) -> Dict[str, Any]:
        images, labels = batch
        loss = self.loss_fn(self.model(images), labels)
        self.context.backward(loss)
        self.context.step_optimizer(self.optimizer)
        return {"loss": loss}

    def evaluate_batch(self, batch: pytorch.TorchData) -> Dict[str, Any]:
        images, labels = batch
        output = self.model(images)
        predicted = output.argmax(dim=1, keepdim=True)
        return {
            "validation_loss": self.loss_fn(output, labels).item(),
            "accuracy": predicted.eq(labels.view_as(predicted)).sum().item() / len(images),
        }
