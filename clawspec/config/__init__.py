"""Configuration: the settings' schema (`settings`), how the layers are read and merged
(`loading`), the variants' checks against the gateway mode (`variants`) and the spelling of
values other packages read again (`values`). Import from those modules: this package
re-exports nothing, so importing one of them costs no more than it needs."""
