"""The decimal places the sections keep of their figures, one choice for every module alike."""

#: Shares and seconds: to a hundredth of a percent, a tenth of a millisecond.
REPORT_DIGITS = 4
#: Figures kept finer: seconds per call or per batch part, joules per sample, hours and costs, TFLOPS.
FINE_DIGITS = 6
