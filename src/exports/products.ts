import type { BlobProducer } from './blobs.js'
import { dailyBlobProducer } from './blobProducers/daily.js'
import { logsBlobProducer } from './blobProducers/logs.js'
import { monthlyBlobProducer } from './blobProducers/monthly.js'
import type { DataSet } from './dataSets.js'
import { creditBureauADataSet } from './dataSets/credit-bureau-a.js'
import { creditBureauBDataSet } from './dataSets/credit-bureau-b.js'
import { csvADataSet } from './dataSets/csv-a.js'
import { debtorsCreditActiveInvoicingADataSet } from './dataSets/debtors-credit-active-invoicing-a.js'
import { debtorsCreditActiveDataSet } from './dataSets/debtors-credit-active.js'
import { debtorsDataSet } from './dataSets/debtors.js'
import { disbursementsDataSet } from './dataSets/disbursements.js'
import { installmentsCutoffDataSet } from './dataSets/installments-cutoff.js'
import { installmentsDataSet } from './dataSets/installments.js'
import { ledgerAClientsDataSet } from './dataSets/ledger-a-clients.js'
import { ledgerAIndividualDataSet } from './dataSets/ledger-a-individual.js'
import { ledgerADataSet } from './dataSets/ledger-a.js'
import { ordersAccountingDataSet } from './dataSets/orders-accounting.js'
import { paymentsDataSet } from './dataSets/payments.js'
import { quantitativeScoringDataSet } from './dataSets/quantitative-scoring.js'
import { receivablesCutoffDataSet } from './dataSets/receivables-cutoff.js'
import { receivablesDataSet } from './dataSets/receivables.js'
import { refinanceDataSet } from './dataSets/refinance.js'
import { reportsDataSet } from './dataSets/reports.js'
import type { ReportSource } from './reportSources.js'
import { productReportSourceList } from './reports/sources.js'

/** The product's data sets, one module per export type (src/exports/dataSets/<type>.ts). */
export const productDataSets: readonly DataSet[] = [
  receivablesDataSet, installmentsDataSet, creditBureauADataSet, creditBureauBDataSet, paymentsDataSet, ledgerADataSet, ledgerAIndividualDataSet,
  ledgerAClientsDataSet, disbursementsDataSet, quantitativeScoringDataSet, refinanceDataSet, csvADataSet, receivablesCutoffDataSet,
  installmentsCutoffDataSet, ordersAccountingDataSet, debtorsDataSet, debtorsCreditActiveDataSet, debtorsCreditActiveInvoicingADataSet, reportsDataSet,
]

/** The sources `reports` draws columns from. */
export const productReportSources: readonly ReportSource[] = productReportSourceList

/** The producers of the `logs`, `daily` and `monthly` blobs. */
export const productBlobProducers: readonly BlobProducer[] = [dailyBlobProducer, logsBlobProducer, monthlyBlobProducer]
