// placeholder: replaced by the VMBus ring model
