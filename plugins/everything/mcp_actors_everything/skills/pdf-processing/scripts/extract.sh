#!/bin/sh
# Print the text of the PDF named by $1.
exec pdftotext -layout "$1" -
